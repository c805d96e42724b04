import { byId } from './dom.js';

/**
 * Asks before a destructive action in the page's modal `<dialog>` (focus stays inside it,
 * Escape cancels); resolves true only for the confirming button. Focus starts on Cancel.
 */
export function confirmAction(options: { title: string; message: string; confirmLabel: string }): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm-dialog');
  const ok = byId<HTMLButtonElement>('confirm-ok');
  const cancel = byId<HTMLButtonElement>('confirm-cancel');
  byId('confirm-title').textContent = options.title;
  byId('confirm-message').textContent = options.message;
  ok.textContent = options.confirmLabel;
  const returnFocus = document.activeElement instanceof HTMLElement ? document.activeElement : null;

  return new Promise((resolve) => {
    const finish = (confirmed: boolean): void => {
      ok.removeEventListener('click', onOk);
      cancel.removeEventListener('click', onCancel);
      dialog.removeEventListener('close', onClose);
      if (dialog.open) dialog.close();
      if (returnFocus?.isConnected) returnFocus.focus();
      resolve(confirmed);
    };
    const onOk = (): void => finish(true);
    const onCancel = (): void => finish(false);
    const onClose = (): void => finish(false);
    ok.addEventListener('click', onOk);
    cancel.addEventListener('click', onCancel);
    dialog.addEventListener('close', onClose);
    dialog.showModal();
    cancel.focus();
  });
}

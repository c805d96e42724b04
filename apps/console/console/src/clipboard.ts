/**
 * Copies a field's value. The Clipboard API needs a secure context (https, or localhost);
 * elsewhere the field is selected and the legacy copy command is tried.
 */
export async function copyText(input: HTMLInputElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(input.value);
    return true;
  } catch {
    input.focus();
    input.select();
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}

// The platform's one webhook verifier (@platform/webhook-verify, on the standardwebhooks package), as
// @platform/webhooks re-exports it too: `verifyWebhook(payload, headers, secret)` everywhere.
export { verifyWebhook, webhookSecret, WebhookVerificationError, type WebhookEvent, type WebhookHeaders, type WebhookSecret } from '@platform/webhook-verify';

export { verifyWebhook, webhookSecret, WebhookVerificationError, type WebhookEvent, type WebhookHeaders, type WebhookSecret } from './verify-webhook.js';

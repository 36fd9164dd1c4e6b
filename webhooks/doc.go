// Package webhooks is the feature "signals from the systems a team runs":
// signed deliveries from Alertmanager, GitHub and anything that can POST
// JSON, served on http.listen at POST /hooks/<name>, each entering the
// engine as a signal from webhook:<name> in its configured conversation,
// one thread per incident.
//
// The path of one delivery (Server.ServeHTTP):
//
//   - hook.go: the configured webhook (Hook), its checks, ParseRate.
//   - unknown name → 404, a method but POST → 405; a declared
//     Content-Length over max_bytes → 413 at once, the body read to at
//     most max_bytes (413 beyond).
//   - verify.go: the bearer (Authorization: Bearer <secret>) or GitHub's
//     X-Hub-Signature-256 (HMAC-SHA256 of the raw body), compared in
//     constant time before anything is parsed; wrong or missing → 401 and
//     nothing else (nothing stored, the body never logged).
//   - limit.go: a token bucket per webhook over verified deliveries only
//     (rate: N/s, N/m, N/h) → 429 with Retry-After in seconds.
//   - parse.go: the payload of the format into a Delivery: its identity
//     (GitHub's X-GitHub-Delivery; Alertmanager's groupKey, status and
//     the alerts' fingerprints and startsAt; json's id or the body's
//     SHA-256), its incident (groupKey; repository plus pull request,
//     issue or workflow run), its event and a compact summary. Not JSON
//     → 400, logged without the body.
//   - deliver.go: the delivery claimed in the store (Store) before it is
//     answered: a duplicate → 200 and nothing else; one another instance
//     is taking → 503 with Retry-After. The incident's thread is looked up
//     in the store, or, once this instance's claim to open it is recorded
//     (another's claim: wait for its thread), opened (core.ThreadStarter,
//     where the gateway has one) and recorded; then the signal is submitted (Inbox) with the
//     prompt and the payload quoted as data, every control and invisible
//     format character escaped (textutil). An event not in events starts
//     nothing (2xx), but a resolution not in events is said in one line in
//     the incident's thread. The claim is finished once the signal is
//     queued, or released on failure (503) so that the sender's retry is
//     taken again.
//   - status.go: /status lines (last delivery and counts per webhook);
//     metrics count every outcome (internal/metrics), the audit records
//     each accepted delivery with its identity.
//
// No allow list applies to a delivery: the signature is its admission
// (core.Signal.Webhook, set only here); the conversation's profile,
// policy, budgets and four-eyes apply, and webhook:<name> is never an
// approver. The wiring (app/webhooks.go) builds the Server from the
// configuration's webhooks: section and swaps its hooks on reload.
package webhooks

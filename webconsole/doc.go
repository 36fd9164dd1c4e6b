// Package webconsole is the web console: a few server-rendered pages on
// http.listen (at /web/) where approvers see what waits for them — the
// whole call, the diff of a file write — and approve or deny it, search
// the audit, and look at the conversations and the instances. It is off
// by default (http.console).
//
// The map:
//   - Signing in (signin.go): an approver's /web in chat (command.go) gets
//     a link, valid ten minutes and usable once, in a direct message; the
//     link opens a page whose button (a POST: a chat app's preview cannot
//     use it up) starts a session. Links and sessions are in the store
//     (Store) as hashes, so any instance serves a session.
//   - Guarding (guard.go): every response has a strict Content-Security-
//     Policy, X-Frame-Options DENY and no caching; every change is a POST
//     with the session's cookie (HttpOnly, SameSite=Strict, __Host- and
//     Secure on https) and a CSRF token derived from that session's id,
//     refused unless Sec-Fetch-Site is same-origin or none and any Origin
//     is the console's own. Query strings and bodies are bounded.
//   - Pages (pending.go, views.go): html/template escapes every untrusted
//     text; decisions go through the broker (Approvals) with the rules of
//     chat, audited "via web".
//
// It knows core, the record types and the leaves; app wires it to the
// broker, the store and the engine.
package webconsole

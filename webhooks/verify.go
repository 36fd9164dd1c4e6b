package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// verified reports whether the request carries h's secret as its format
// takes it: alertmanager a bearer, github X-Hub-Signature-256 (GitHub's
// SHA-1 X-Hub-Signature is not enough), json either. Comparisons are in
// constant time; nothing of the body is read but for the HMAC.
func verified(h *Hook, header http.Header, body []byte) bool {
	switch h.Format {
	case FormatAlertmanager:
		return bearerOK(h.Secret, header)
	case FormatGitHub:
		return signatureOK(h.Secret, header, body)
	case FormatJSON:
		return bearerOK(h.Secret, header) || signatureOK(h.Secret, header, body)
	}
	return false
}

// bearerOK compares the Authorization header with "Bearer <secret>".
func bearerOK(secret string, header http.Header) bool {
	got := header.Get("Authorization")
	return secret != "" && subtle.ConstantTimeCompare([]byte(got), []byte("Bearer "+secret)) == 1
}

// signatureOK checks X-Hub-Signature-256: "sha256=" and the hex HMAC-SHA256
// of body keyed by secret.
func signatureOK(secret string, header http.Header, body []byte) bool {
	hexSig, ok := strings.CutPrefix(header.Get("X-Hub-Signature-256"), "sha256=")
	if !ok || secret == "" {
		return false
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	return hmac.Equal(sig, Sign(secret, body))
}

// Sign returns the HMAC-SHA256 of body keyed by secret, as GitHub signs a
// delivery (X-Hub-Signature-256 is "sha256=" and its hex).
func Sign(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

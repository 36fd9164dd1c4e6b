package auditchain_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/gatehouse-bot/gatehouse/store/auditchain"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// TestSumInstance: a row's instance is part of its hash when it has one,
// and a row without one hashes as the documented encoding says (as rows
// did before the column): an instance name edited in shows.
func TestSumInstance(t *testing.T) {
	e := record.AuditEntry{At: time.Unix(0, 42), Conv: "c", Tool: "shell", Args: "{}", RequestedBy: "x:1",
		Outcome: "executed", Token: "T"}
	enc := "gatehouse audit v1\n"
	for _, f := range []string{"p", "42", "c", "shell", "{}", "x:1", "", "executed", "", "T"} {
		enc += strconv.Itoa(len(f)) + ":" + f + "\n"
	}
	sum := sha256.Sum256([]byte(enc))
	if got := auditchain.Sum("p", e); got != hex.EncodeToString(sum[:]) {
		t.Errorf("Sum of a row without an instance = %s; want the documented encoding's %x", got, sum)
	}
	a, b := e, e
	a.Instance, b.Instance = "host-a", "host-b"
	if auditchain.Sum("p", a) == auditchain.Sum("p", e) || auditchain.Sum("p", a) == auditchain.Sum("p", b) {
		t.Error("the instance does not change a row's hash")
	}
}

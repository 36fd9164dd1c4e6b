package app

import (
	"context"

	"github.com/gatehouse-bot/gatehouse/store"
	"github.com/gatehouse-bot/gatehouse/store/record"
)

// stampAudit is st's audit log as this instance writes to it: on a store
// several instances share, each entry names the instance that wrote it
// (record.AuditEntry.Instance, which `bot audit` shows); on one that is
// not shared (SQLite: one process) st itself, entries unnamed.
func stampAudit(st store.Store, instance string) store.Audit {
	if sh, ok := st.(store.Sharer); !ok || !sh.Shared() || instance == "" {
		return st
	}
	return instanceAudit{Audit: st, instance: instance}
}

// instanceAudit stamps each entry appended with instance.
type instanceAudit struct {
	store.Audit
	instance string
}

func (a instanceAudit) AppendAudit(ctx context.Context, e record.AuditEntry) error {
	if e.Instance == "" {
		e.Instance = a.instance
	}
	return a.Audit.AppendAudit(ctx, e)
}

package app

import (
	"github.com/gatehouse-bot/gatehouse/checkpoint"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/core/tools"
	"github.com/gatehouse-bot/gatehouse/gateways"
	"github.com/gatehouse-bot/gatehouse/hitl"
	"github.com/gatehouse-bot/gatehouse/store"
)

// Compile-time checks that the parts wired here fit. store.Store lists the
// methods of its consumers' interfaces itself, because store packages import
// neither hitl nor gateways; and the hitl broker implements
// gateways.Approvals without importing gateways.
var (
	_ hitl.Store           = store.Store(nil)
	_ hitl.Audit           = store.Store(nil)
	_ hitl.StandingStore   = store.Store(nil)
	_ hitl.GrantStore      = store.Store(nil)
	_ gateways.Cursors     = store.Store(nil)
	_ gateways.Memory      = store.Store(nil)
	_ gateways.Parking     = store.Store(nil)
	_ gateways.Admission   = (*core.Auth)(nil)
	_ checkpoint.Index     = store.Store(nil)
	_ checkpoint.Audit     = store.Store(nil)
	_ checkpoint.BlobTable = store.CheckpointBlobStore(nil)
	_ tools.Checkpointer   = (*checkpoint.Manager)(nil)
	_ gateways.Approvals   = (*hitl.Broker)(nil)
)

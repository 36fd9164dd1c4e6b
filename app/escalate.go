package app

import (
	"fmt"

	"github.com/gatehouse-bot/gatehouse/config"
	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/hitl"
)

// nudges are hitl.remind_after and hitl.escalate for the broker.
func nudges(cfg *config.Config) (hitl.Nudges, error) {
	n := hitl.Nudges{RemindAfter: cfg.HITL.RemindAfter.D()}
	for i, e := range cfg.HITL.Escalate {
		step := hitl.Escalation{After: e.After.D(), Approvers: identities(e.Approvers)}
		for j, key := range e.Notify {
			c, err := core.ParseConversation(key)
			if err != nil {
				return hitl.Nudges{}, configErrorf("hitl.escalate[%d].notify[%d]: %v", i, j, err)
			}
			step.Notify = append(step.Notify, c)
		}
		n.Escalate = append(n.Escalate, step)
	}
	return n, nil
}

// checkEscalation fails, matching ErrConfig and naming the key, when an
// approver of hitl.escalate is on a gateway that does not run: the
// escalated request could never reach them.
func checkEscalation(cfg *config.Config, enabled map[string]bool) error {
	for i, e := range cfg.HITL.Escalate {
		for j, id := range identities(e.Approvers) {
			if !enabled[id.Gateway()] {
				return configErrorf("hitl.escalate[%d].approvers[%d]: %s is on gateway %s, which is not enabled: the escalated request could not reach them (enable it, or list an identity on an enabled gateway)",
					i, j, fmt.Sprintf("%q", string(id)), id.Gateway())
			}
		}
	}
	return nil
}

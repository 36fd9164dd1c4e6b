package telegram_test

import (
	"testing"

	"github.com/gatehouse-bot/gatehouse/internal/testutil"

	fakeoai "github.com/gatehouse-bot/gatehouse/internal/fake/openai"
	faketg "github.com/gatehouse-bot/gatehouse/internal/fake/telegram"
)

// TestE2EReplyOfATurnInFlightAtShutdownIsDelivered: a turn still waiting
// on the model when the bot is told to stop finishes within the grace
// period, and its reply reaches the chat although the gateway no longer
// polls: delivery runs on the turn's context, not the stopped gateway's.
func TestE2EReplyOfATurnInFlightAtShutdownIsDelivered(t *testing.T) {
	e := startE2E(t)
	release := make(chan struct{})
	e.ai.Respond(func(fakeoai.Request) fakeoai.Step {
		<-release
		return fakeoai.Text("the answer, written while stopping")
	})
	e.tg.InjectMessage(faketg.Message{From: &guest, Chat: faketg.Chat{ID: guest.ID, Type: "private"}, Text: "a slow question"})
	testutil.WaitFor(t, "the model asked", func() bool { return len(e.ai.Requests()) == 1 })
	e.run.Cancel() // SIGTERM: input stops, the grace period begins
	close(release)
	e.waitSent(t, guest.ID, "the answer, written while stopping")
	testutil.WaitFor(t, "app.Run to return once the turn is done", func() bool {
		returned, _ := e.run.Returned()
		return returned
	})
}

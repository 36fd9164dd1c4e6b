package slack

import (
	"testing"

	"github.com/gatehouse-bot/gatehouse/gateways/gatewaytest"
)

// TestDefaultClientKeepsConnections: the default client keeps as many idle
// connections to the Web API as the global pace sends a second.
func TestDefaultClientKeepsConnections(t *testing.T) {
	c, err := Config{BotToken: "xoxb-t", AppToken: "xapp-t"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	gatewaytest.KeepsIdleConnections(t, c.HTTPClient, 20)
}

package mcp

import (
	"fmt"
	"time"

	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// Defaults of ServerConfig.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultTimeout      = 60 * time.Second
)

// ServerConfig is one MCP server: a stdio child (Command) or a Streamable
// HTTP endpoint (URL), never both.
type ServerConfig struct {
	// Name is the server's part of its tools' names: letters, digits and
	// dashes, at most MaxNameLen.
	Name string
	// Command, Args, Env and Dir start a stdio server. The child's
	// environment is exactly Env plus PATH and HOME from the bot unless Env
	// sets them.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL and Headers reach a Streamable HTTP server.
	URL     string
	Headers map[string]string
	// StartTimeout bounds the start: process, initialisation and the first
	// tool list (default 30s).
	StartTimeout time.Duration
	// Timeout bounds one tool call (default 60s).
	Timeout time.Duration
}

// MaxNameLen is the longest server name, so that every tool keeps its
// "mcp__<server>__" prefix within the 64 characters of a tool name.
const MaxNameLen = 24

// serverChars are what a server name may hold: no underscore, so that
// "mcp__<server>__<tool>" splits one way only.
const serverChars = textutil.Alnum + "-"

// CheckName reports why name cannot name a server, or nil.
func CheckName(name string) error {
	if !textutil.Shape(name, 1, MaxNameLen, serverChars) {
		return fmt.Errorf("server name %q: want letters, digits and dashes, 1 to %d of them", name, MaxNameLen)
	}
	return nil
}

// Transport names the server's transport, "stdio" or "http".
func (c ServerConfig) Transport() string {
	if c.URL != "" {
		return "http"
	}
	return "stdio"
}

func (c ServerConfig) startTimeout() time.Duration {
	if c.StartTimeout > 0 {
		return c.StartTimeout
	}
	return DefaultStartTimeout
}

func (c ServerConfig) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

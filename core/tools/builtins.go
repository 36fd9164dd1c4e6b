package tools

import (
	"time"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/secrets"
	"github.com/gatehouse-bot/gatehouse/internal/supervise"
)

// BuiltinOptions configure the built-in tools.
type BuiltinOptions struct {
	// Workspace is the directory of the file tools and the shell; it is
	// created if missing.
	Workspace string
	// Secrets are kept out of the shell's environment and output.
	Secrets *secrets.Set
	// EnvPrefixes name the gateways' configuration variables (from the
	// gateway table), which the shell keeps from commands.
	EnvPrefixes []string
	// HTTP configures http_get.
	HTTP HTTPOptions
	// Now is current_time's clock; nil means time.Now.
	Now func() time.Time
	// Sandbox confines the shell's commands (default off).
	Sandbox supervise.Sandbox
	// Supervisor is the shell's supervisor executable (see ShellOptions).
	Supervisor string
	// Files finds the gateway send_file sends through (the Engine's
	// actuators); nil: send_file is listed but refuses every call.
	Files core.FileSenders
}

// RegisterBuiltins registers shell, read_file, write_file, list_dir,
// send_file, http_get and current_time.
func RegisterBuiltins(r *Registry, o BuiltinOptions) error {
	ws, err := NewWorkspace(o.Workspace)
	if err != nil {
		return err
	}
	for _, t := range []Tool{
		NewShell(ShellOptions{Workspace: ws.Dir(), Secrets: o.Secrets, Sandbox: o.Sandbox, Supervisor: o.Supervisor, EnvPrefixes: o.EnvPrefixes}),
		NewReadFile(ws),
		NewWriteFile(ws),
		NewListDir(ws),
		NewSendFile(ws, o.Files, o.Secrets),
		NewHTTPGet(o.HTTP),
		NewCurrentTime(o.Now),
	} {
		if err := r.Register(t); err != nil {
			return err
		}
	}
	return nil
}

//go:build !linux

package mcp

import "os/exec"

// setProcAttr does nothing where process groups are not used.
func setProcAttr(*exec.Cmd) {}

// killGroup kills the child.
func killGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

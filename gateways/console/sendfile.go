package console

import (
	"context"
	"fmt"

	"github.com/gatehouse-bot/gatehouse/core"
	"github.com/gatehouse-bot/gatehouse/internal/textutil"
)

// maxFileBytes is what the console takes: no platform limit, so
// send_file's own cap applies.
const maxFileBytes = 1 << 30

var _ core.FileSender = (*Console)(nil)

// MaxFileBytes is the console's limit: none of its own.
func (c *Console) MaxFileBytes() int64 { return maxFileBytes }

// SendFile shows, as one line of the bot's, the file send_file would send
// on a platform: its path in the workspace (where the local user finds
// it), its size and media type, and the caption. Nothing is copied: the
// console is the machine the workspace is on. Path and caption are shown
// escaped, like every reply.
func (c *Console) SendFile(_ context.Context, _ core.Conversation, f core.OutgoingFile) error {
	line := fmt.Sprintf("[file] %s (%d bytes, %s) in the workspace", textutil.Visible(f.Path),
		len(f.Data), textutil.Visible(f.MediaType))
	if f.Caption != "" {
		line += ": " + textutil.Visible(f.Caption)
	}
	c.notice(line)
	return nil
}

var _ core.PromptSizer = (*Console)(nil)

// PromptRoom is 0: a terminal shows an approval request of any length
// whole, so nothing in it is shortened.
func (c *Console) PromptRoom() int { return 0 }

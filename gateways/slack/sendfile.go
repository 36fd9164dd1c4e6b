package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"github.com/gatehouse-bot/gatehouse/core"
)

// maxFileBytes is the largest file Slack takes (1 GB); send_file's own
// cap is lower.
const maxFileBytes = 1 << 30

var _ core.FileSender = (*Gateway)(nil)

// MaxFileBytes is the largest file Slack takes.
func (g *Gateway) MaxFileBytes() int64 { return maxFileBytes }

// SendFile shares f in conv's channel and thread with Slack's external
// upload flow (it needs the files:write scope): files.getUploadURLExternal,
// the bytes POSTed to the upload URL it returns (the library sends the bot
// token only to a Slack host or the API URL's), then
// files.completeUploadExternal with channel_id, thread_ts and the caption
// as initial_comment (converted like a reply, so "<!channel>" stays
// text). The three requests go through the delivery layer as one file:
// each paced and retried, a 429 waited out.
func (g *Gateway) SendFile(ctx context.Context, conv core.Conversation, f core.OutgoingFile) error {
	if conv.Chat == "" {
		return errors.New("slack: file: no channel")
	}
	timeout := g.cfg.SendTimeout + time.Duration(len(f.Data)>>20)*time.Second // a second more a MiB
	var up *slack.GetUploadURLExternalResponse
	getURL := func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
		defer cancel()
		r, err := g.api.GetUploadURLExternalContext(rctx, slack.GetUploadURLExternalParameters{FileName: f.Name, FileSize: len(f.Data)})
		if err != nil {
			return g.scrub(err)
		}
		up = r
		return nil
	}
	upload := func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return g.scrub(g.api.UploadToURL(rctx, slack.UploadToURLParameters{UploadURL: up.UploadURL, Reader: bytes.NewReader(f.Data), Filename: f.Name}))
	}
	complete := func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, g.cfg.SendTimeout)
		defer cancel()
		p := slack.CompleteUploadExternalParameters{Files: []slack.FileSummary{{ID: up.FileID, Title: f.Name}},
			Channel: conv.Chat, ThreadTimestamp: conv.Thread}
		if f.Caption != "" {
			p.InitialComment = toMrkdwn(f.Caption)
		}
		_, err := g.api.CompleteUploadExternalContext(rctx, p)
		return g.scrub(err)
	}
	if err := g.out.File(ctx, conv, getURL, upload, complete); err != nil {
		return fmt.Errorf("slack: file to %s: %w", conv.Key(), err)
	}
	g.takePart(ctx, conv) // a thread the bot posted in
	return nil
}

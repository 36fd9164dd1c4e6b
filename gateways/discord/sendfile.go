package discord

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/gatehouse-bot/gatehouse/core"
)

// maxFileBytes is the largest file a bot may send: Discord's default
// upload limit, 10 MiB since January 2025 (the API's change log; it was
// 25 MiB before). A server's boosts may allow more; send_file keeps to
// what every server takes.
const maxFileBytes = 10 << 20

var _ core.FileSender = (*Gateway)(nil)

// MaxFileBytes is Discord's default upload limit.
func (g *Gateway) MaxFileBytes() int64 { return maxFileBytes }

// SendFile sends f to conv's channel (a thread is a channel on Discord)
// as a message with the file (multipart: payload_json and files[0]) and
// the caption as its content, which pings no one (allowed_mentions as
// for replies). It is one request through the delivery layer: paced, a
// 429 waited out, retried within the deadline.
func (g *Gateway) SendFile(ctx context.Context, conv core.Conversation, f core.OutgoingFile) error {
	if err := checkChannel(conv); err != nil {
		return err
	}
	timeout := g.cfg.SendTimeout + time.Duration(len(f.Data)>>20)*time.Second // a second more a MiB
	err := g.out.File(ctx, conv, func(ctx context.Context) error {
		msg := &discordgo.MessageSend{Content: f.Caption, AllowedMentions: mentions(),
			Files: []*discordgo.File{{Name: f.Name, ContentType: f.MediaType, Reader: bytes.NewReader(f.Data)}}}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		_, err := g.s.ChannelMessageSendComplex(channelOf(conv), msg, discordgo.WithContext(rctx))
		return g.scrub(err)
	})
	if err != nil {
		return fmt.Errorf("discord: file to %s: %w", conv.Key(), err)
	}
	return nil
}

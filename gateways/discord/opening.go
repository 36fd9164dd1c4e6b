package discord

import (
	"context"
	"net"
	"sync"
)

// opening is the attempt at opening the websocket under way, which can be
// cut short. discordgo's Open asks for the gateway URL without a context
// and reads HELLO and READY without a deadline, all under the session's
// lock: a gateway that hangs would hold Open, and with it shutdown, for
// ever. Cutting the attempt ends its gateway URL request and closes the
// socket it dialed, so Open returns an error.
type opening struct {
	mu     sync.Mutex
	ctx    context.Context // the attempt's; ends when it is cut or finished
	cancel context.CancelFunc
	conn   net.Conn // the socket the attempt dialed; nil before, and after it finished
}

// start begins an attempt.
func (o *opening) start() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ctx, o.cancel = context.WithCancel(context.Background())
	o.conn = nil
}

// finish ends the attempt: a later cut touches nothing.
func (o *opening) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cancel()
	o.conn = nil
}

// cut ends the attempt's requests and closes its socket.
func (o *opening) cut() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cancel != nil {
		o.cancel()
	}
	if o.conn != nil {
		_ = o.conn.Close()
	}
}

// context is the attempt's context, for the gateway URL request.
func (o *opening) context() context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ctx == nil {
		return context.Background()
	}
	return o.ctx
}

// dial is the websocket dialer's NetDialContext: it remembers the socket
// for cut, and dials nothing for an attempt cut already.
func (o *opening) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	attempt := o.context()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(attempt, stop)()
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := attempt.Err(); err != nil {
		_ = c.Close()
		return nil, err
	}
	o.conn = c
	return c, nil
}

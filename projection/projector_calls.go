package projection

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/cgcat/cgcat/gbrain"
)

func (p *Projector) retryBudget() time.Duration {
	if p.RetryBudget > 0 {
		return p.RetryBudget
	}
	return 5 * time.Second
}

// retry runs op on a live client, redialing and backing off while the
// failure is transient (nothing changed in GBrain), within RetryBudget.
func (p *Projector) retry(ctx context.Context, op func(c gbrain.Brain) error) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 100 * time.Millisecond
	b.MaxInterval = 2 * time.Second
	b.MaxElapsedTime = p.retryBudget()
	return backoff.Retry(func() error {
		c, err := p.conn.Client(ctx)
		if err == nil {
			start := time.Now()
			err = op(c)
			p.netTime.Add(int64(time.Since(start)))
		}
		if err == nil || gbrain.IsTransient(err) {
			return err
		}
		return backoff.Permanent(err)
	}, backoff.WithContext(b, ctx))
}

// read returns the page with its content, or nil when there is none.
func (p *Projector) read(ctx context.Context, slug string) (*gbrain.Page, error) {
	var page *gbrain.Page
	err := p.retry(ctx, func(c gbrain.Brain) error {
		pg, err := c.GetPage(ctx, slug, true)
		if errors.Is(err, gbrain.ErrPageNotFound) {
			page = nil
			return nil
		}
		page = pg
		return err
	})
	return page, err
}

// put writes once; only a failure that surely sent nothing is retried here.
func (p *Projector) put(ctx context.Context, slug, content string) (*gbrain.PutResult, error) {
	var res *gbrain.PutResult
	err := p.retry(ctx, func(c gbrain.Brain) error {
		r, err := c.PutPage(ctx, slug, content)
		res = r
		return err
	})
	return res, err
}

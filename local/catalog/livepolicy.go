package catalog

import (
	"sync"
	"time"

	"github.com/cgcat/cgcat/local/config"
)

// Source gives the policy in force. A Policy is its own (fixed) source; a
// long-running process follows its config file with Live.
type Source interface{ Policy() Policy }

// Policy makes a fixed Policy a Source.
func (p Policy) Policy() Policy { return p }

// PolicyCache resolves the policy of a config and keeps it for a short
// time: deny roots are resolved again on disk (a symlink retargeted, a
// directory created) after that, and at once when the config changes.
type PolicyCache struct {
	mu  sync.Mutex
	of  *config.Config
	at  time.Time
	pol Policy
}

// policyTTL bounds how long a resolution of the deny roots is trusted.
const policyTTL = 250 * time.Millisecond

// For is the policy of c (nothing is shown for no config).
func (pc *PolicyCache) For(c *config.Config) Policy {
	if c == nil {
		return Policy{}
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if now := time.Now(); pc.of != c || now.Sub(pc.at) > policyTTL {
		pc.of, pc.at, pc.pol = c, now, PolicyFrom(c)
	}
	return pc.pol
}

type livePolicy struct {
	cfg   *config.Live
	cache PolicyCache
}

// Live follows cfg: every Policy call is the policy of the config in force.
func Live(cfg *config.Live) Source { return &livePolicy{cfg: cfg} }

func (l *livePolicy) Policy() Policy {
	c, _ := l.cfg.Current()
	return l.cache.For(c)
}

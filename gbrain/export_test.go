package gbrain

// HowEnded is how a closed stdio client's child ended (tests only).
func HowEnded(c *Client) *ProcessExitedError { return c.reap() }

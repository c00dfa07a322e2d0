package controller

import (
	"errors"
	"fmt"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
)

// CheckConfig validates and fills the settings every controller's Config
// shares: a client is required, Workers may not be negative and 0 means
// defaultWorkers, and a nil clock is the real clock. name prefixes the
// errors ("deployment: Config.Client is required").
func CheckConfig(name string, c *client.Client, workers *int, defaultWorkers int, clk *clock.WithDelayedExecution) error {
	if c == nil {
		return errors.New(name + ": Config.Client is required")
	}
	if *workers < 0 {
		return fmt.Errorf("%s: Workers (%d) must not be negative", name, *workers)
	}
	if *clk == nil {
		*clk = clock.RealClock{}
	}
	if *workers == 0 {
		*workers = defaultWorkers
	}
	return nil
}

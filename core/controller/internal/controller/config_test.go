package controller

import (
	"testing"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/client"
)

func TestCheckConfig(t *testing.T) {
	c := &client.Client{}
	var clk clock.WithDelayedExecution
	if err := CheckConfig("x", nil, new(int), 5, &clk); err == nil || err.Error() != "x: Config.Client is required" {
		t.Errorf("no client: %v", err)
	}
	neg := -1
	if err := CheckConfig("x", c, &neg, 5, &clk); err == nil || err.Error() != "x: Workers (-1) must not be negative" {
		t.Errorf("negative workers: %v", err)
	}
	workers := 0
	if err := CheckConfig("x", c, &workers, 5, &clk); err != nil || workers != 5 || clk == nil {
		t.Errorf("defaults: err %v workers %d clock %v", err, workers, clk)
	}
}

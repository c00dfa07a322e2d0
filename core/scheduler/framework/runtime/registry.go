package runtime

import (
	"context"
	"fmt"

	"github.com/kubetab/kubetab/core/scheduler/framework"
)

// PluginFactory builds a plugin. h is the framework the plugin belongs to.
type PluginFactory func(ctx context.Context, h framework.Handle) (framework.Plugin, error)

// Registry maps plugin names to their factories (upstream:
// pkg/scheduler/framework/runtime/registry.go). The in-tree plugins are in
// plugins.NewInTreeRegistry.
type Registry map[string]PluginFactory

// Register adds a factory; a name may be registered once.
func (r Registry) Register(name string, f PluginFactory) error {
	if _, ok := r[name]; ok {
		return fmt.Errorf("a plugin named %v already exists", name)
	}
	r[name] = f
	return nil
}

// Merge registers every factory of in.
func (r Registry) Merge(in Registry) error {
	for name, f := range in {
		if err := r.Register(name, f); err != nil {
			return err
		}
	}
	return nil
}

// PluginConfig enables one plugin in a profile.
type PluginConfig struct {
	Name string
	// Weight multiplies the plugin's scores; 0 means 1. Only score plugins
	// use it.
	Weight int32
}

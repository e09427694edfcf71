package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/templatedrift/template-drift-controller/api"
)

// ErrInvalidConfiguration wraps every configuration error found on a
// HelmRelease; the controller reports it and writes nothing.
var ErrInvalidConfiguration = errors.New("invalid configuration")

// Mode is the parsed value of api.ModeAnnotation.
type Mode string

// Strategy is the parsed value of api.StrategyAnnotation.
type Strategy string

// Modes and strategies, typed.
const (
	ModeDisabled Mode = api.ModeDisabled
	ModeWarn     Mode = api.ModeWarn
	ModeEnabled  Mode = api.ModeEnabled

	StrategyAuto     Strategy = api.StrategyAuto
	StrategyInPlace  Strategy = api.StrategyInPlace
	StrategyRotate   Strategy = api.StrategyRotate
	StrategyRecreate Strategy = api.StrategyRecreate
)

// RolloutPolicy is the parsed value of api.RolloutsAnnotation.
type RolloutPolicy string

// Rollout policies: deny (the zero value's meaning too) holds a correction
// that rolls Machines until it is approved; allow makes it.
const (
	RolloutsDeny  RolloutPolicy = api.RolloutsDeny
	RolloutsAllow RolloutPolicy = api.RolloutsAllow
)

func (p RolloutPolicy) String() string { return string(p) }

// ParseRolloutPolicy reads a rollout policy (the controller's flag, or the
// annotation); "" is deny, so that a policy left unset fails closed.
func ParseRolloutPolicy(v string) (RolloutPolicy, error) {
	switch RolloutPolicy(v) {
	case "", RolloutsDeny:
		return RolloutsDeny, nil
	case RolloutsAllow:
		return RolloutsAllow, nil
	}
	return "", fmt.Errorf("%w: rollout policy %q: want deny or allow", ErrInvalidConfiguration, v)
}

// Options are the add-on's settings for one HelmRelease.
type Options struct {
	Mode     Mode
	Strategy Strategy
	// Prune deletes unused replacements the add-on created for the release
	// (api.PruneAnnotation); on by default.
	Prune bool
	// Rollouts is the rollout policy (api.RolloutsAnnotation, else the
	// controller's default), Approved the rollout ids approved
	// (api.ApproveRolloutAnnotation), sorted and without duplicates.
	Rollouts RolloutPolicy
	Approved []string
}

// ParseOptions reads the add-on's annotations. An absent mode is disabled, an
// absent strategy is auto, an absent rollout policy is the given default (deny when ""); any other
// unknown value is an error wrapping ErrInvalidConfiguration. The Options
// returned alongside carry the mode as written, so a release whose mode is
// disabled is never reported as invalid for its other annotations.
func ParseOptions(annotations map[string]string, rollouts RolloutPolicy) (Options, error) {
	o := Options{Mode: ModeDisabled, Strategy: StrategyAuto, Prune: true, Rollouts: rollouts}
	if o.Rollouts == "" {
		o.Rollouts = RolloutsDeny
	}
	if v, ok := annotations[api.ModeAnnotation]; ok {
		switch Mode(v) {
		case ModeDisabled, ModeWarn, ModeEnabled:
			o.Mode = Mode(v)
		default:
			o.Mode = Mode(v)
			return o, fmt.Errorf("%w: annotation %s=%q: want one of enabled, warn, disabled",
				ErrInvalidConfiguration, api.ModeAnnotation, v)
		}
	}
	if v, ok := annotations[api.StrategyAnnotation]; ok {
		switch Strategy(v) {
		case StrategyAuto, StrategyInPlace, StrategyRotate, StrategyRecreate:
			o.Strategy = Strategy(v)
		default:
			return o, fmt.Errorf("%w: annotation %s=%q: want one of auto, in-place, rotate, recreate",
				ErrInvalidConfiguration, api.StrategyAnnotation, v)
		}
	}
	if v, ok := annotations[api.PruneAnnotation]; ok {
		switch v {
		case api.ModeEnabled, api.ModeDisabled:
			o.Prune = v == api.ModeEnabled
		default:
			return o, fmt.Errorf("%w: annotation %s=%q: want enabled or disabled",
				ErrInvalidConfiguration, api.PruneAnnotation, v)
		}
	}
	if v, ok := annotations[api.RolloutsAnnotation]; ok {
		p, err := ParseRolloutPolicy(v)
		if err != nil || v == "" {
			return o, fmt.Errorf("%w: annotation %s=%q: want deny or allow", ErrInvalidConfiguration, api.RolloutsAnnotation, v)
		}
		o.Rollouts = p
	}
	o.Approved = parseApprovals(annotations[api.ApproveRolloutAnnotation])
	return o, nil
}

// parseApprovals splits the approved ids, separated by commas (spaces
// around them allowed), dropping empty ones. An id that matches no rollout
// is not an error: the pass reports it as stale or done.
func parseApprovals(v string) []string {
	var out []string
	for _, id := range strings.Split(v, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

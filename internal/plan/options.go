package plan

import (
	"errors"
	"fmt"

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

// Options are the add-on's settings for one HelmRelease.
type Options struct {
	Mode     Mode
	Strategy Strategy
	// Prune deletes unused replacements the add-on created for the release
	// (api.PruneAnnotation); on by default.
	Prune bool
}

// ParseOptions reads the add-on's annotations. An absent mode is disabled, an
// absent strategy is auto; any other unknown value is an error wrapping
// ErrInvalidConfiguration. The Options returned alongside carry the mode as
// written, so a release whose mode is disabled is never reported as invalid
// for its other annotations.
func ParseOptions(annotations map[string]string) (Options, error) {
	o := Options{Mode: ModeDisabled, Strategy: StrategyAuto, Prune: true}
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
	return o, nil
}

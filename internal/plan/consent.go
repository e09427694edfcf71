package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/templatedrift/template-drift-controller/api"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// RolloutState is what a pass does with a correction that rolls Machines.
type RolloutState string

const (
	// RolloutAllowed means the release's rollout policy is allow; it is made.
	RolloutAllowed RolloutState = "Allowed"
	// RolloutApproved means its id is approved; it is made.
	RolloutApproved RolloutState = "Approved"
	// RolloutAwaitingApproval means the policy is deny and its id is not
	// approved; nothing is written for the correction.
	RolloutAwaitingApproval RolloutState = "AwaitingApproval"
	// RolloutAwaitingBudget means it may be made, but the fleet's rollout budget
	// is spent; nothing is written for the correction until a rollout ends.
	RolloutAwaitingBudget RolloutState = "AwaitingBudget"
)

// Waits reports whether nothing is written for the correction this pass.
func (s RolloutState) Waits() bool {
	return s == RolloutAwaitingApproval || s == RolloutAwaitingBudget
}

// MachineRollout is the rollout one template's correction makes: the
// consumers of the release that roll Machines (MachineDeployments,
// MachinePools, control planes) and whose reference to the template moves
// this pass.
type MachineRollout struct {
	// ID is a short digest of what the rollout writes (RolloutID): an
	// approval names it.
	ID string
	// To is the name the consumers move to: a replacement, or the
	// template's own name on the way back.
	To string
	// Consumers are the release's consumers that roll Machines and will
	// reference To, with their Machines, sorted.
	Consumers []RolledConsumer
	State     RolloutState
	// Was is the template's outcome before its correction was held back
	// (OutcomeDrifted for a rotation still to make).
	Was Outcome
}

// Back reports whether the rollout moves consumers back to the template's
// own name (the way back after a rotation).
func (r MachineRollout) Back(t manifest.ID) bool { return r.To == t.Name }

// RolledConsumer is a consumer a rollout repoints, with its Machines.
type RolledConsumer struct {
	ID       manifest.ID
	Machines MachineCount
	// Made is the api.RolloutsMadeAnnotation of a consumer that moves this
	// pass, as read; "" for one already where the rollout takes it, so that
	// a rollout a crash cut short keeps its id (see RolloutID).
	Made string
}

// Approval is what became of one approved id this pass.
type Approval struct {
	ID    string
	State ApprovalState
}

// ApprovalState says what an approved id matched.
type ApprovalState string

const (
	// ApprovalUsed means a rollout waiting for this id is made this pass.
	ApprovalUsed ApprovalState = "Used"
	// ApprovalWaiting means the rollout it approves waits for the budget.
	ApprovalWaiting ApprovalState = "Waiting"
	// ApprovalDone means the rollout was made earlier (a consumer of the
	// release records it); it rolls nothing again.
	ApprovalDone ApprovalState = "Done"
	// ApprovalStale means the id matches no rollout of the release, made or
	// waiting: the chart or the live objects changed since it was read.
	ApprovalStale ApprovalState = "Stale"
)

// rolloutIDLength is how many hex digits of the digest an id keeps: short
// enough to type, long enough that two plans of one release do not meet.
const rolloutIDLength = 10

// RolloutID is the id of a rollout: a digest of the template, the name its
// consumers move to (a replacement's name is a hash of its content), and
// each consumer, with the rollouts already made on it when it still has to
// move. It is the same on every pass while that is the same, also after a
// crash between two repoints of one rollout, and changes with any of it:
// another chart, another consumer, or a consumer set back after a rollout
// made on it (its made rollouts then include the first id).
func RolloutID(template manifest.ID, to string, consumers []RolledConsumer) string {
	h := sha256.New()
	h.Write([]byte(qualified(template) + "\n" + to + "\n"))
	for _, c := range consumers {
		h.Write([]byte(qualified(c.ID) + " made=" + c.Made + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:rolloutIDLength]
}

// qualified names id with its group: kinds of two groups may share a name.
func qualified(id manifest.ID) string {
	return id.GroupKind.String() + "/" + id.Namespace + "/" + id.Name
}

// madeIDs are the ids api.RolloutsMadeAnnotation lists.
func madeIDs(v string) []string {
	var out []string
	for _, id := range strings.Split(v, ",") {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

// maxMadeIDs bounds the ids a consumer keeps: the newest are the ones an
// approval still on the HelmRelease may name.
const maxMadeIDs = 5

// withMade is the value of api.RolloutsMadeAnnotation once ids are made:
// them first, then the ones kept, up to maxMadeIDs.
func withMade(current string, ids []string) string {
	out := slices.Clone(ids)
	for _, id := range madeIDs(current) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return strings.Join(out[:min(len(out), maxMadeIDs)], ",")
}

// consent decides the rollout state of each correction that rolls
// Machines: allowed by the policy, approved by its id, or waiting; and
// then, when the fleet's budget is spent, the ones that would start wait
// for it. It also says what became of each approved id.
func consent(rollouts map[manifest.ID]*MachineRollout, opts Options, budgetSpent bool, made []string) []Approval {
	matched := map[string]ApprovalState{}
	for _, r := range rollouts {
		switch {
		case opts.Rollouts == RolloutsAllow:
			r.State = RolloutAllowed
		case slices.Contains(opts.Approved, r.ID):
			r.State, matched[r.ID] = RolloutApproved, ApprovalUsed
		default:
			r.State = RolloutAwaitingApproval
		}
		if budgetSpent && !r.State.Waits() {
			r.State = RolloutAwaitingBudget
			if _, ok := matched[r.ID]; ok {
				matched[r.ID] = ApprovalWaiting
			}
		}
	}
	var out []Approval
	for _, id := range opts.Approved {
		state, ok := matched[id]
		switch {
		case ok:
			out = append(out, Approval{ID: id, State: state})
		case slices.Contains(made, id):
			out = append(out, Approval{ID: id, State: ApprovalDone})
		default:
			out = append(out, Approval{ID: id, State: ApprovalStale})
		}
	}
	return out
}

// RecordChanges are the operations that record, on a consumer repointed
// for rollouts that are made, their ids (api.RolloutsMadeAnnotation), in
// the same patch as the repoint: a made rollout is known from the world,
// never from the add-on's memory.
func recordChanges(cp ConsumerPlan, ids []string) ConsumerPlan {
	v := withMade(cp.Live.GetAnnotations()[api.RolloutsMadeAnnotation], ids)
	cp.Changes = append(slices.Clone(cp.Changes), annotate(cp.Live, map[string]string{api.RolloutsMadeAnnotation: v})...)
	return cp
}

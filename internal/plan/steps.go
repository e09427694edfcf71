package plan

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/templatedrift/template-drift-controller/internal/diff"
	"github.com/templatedrift/template-drift-controller/internal/manifest"
)

// Op is what one step of a pass does to the target cluster.
type Op string

const (
	// OpBlockMove sets the add-on's move block on the Cluster Live, read
	// again just before: a Cluster found paused, gone or replaced stops the
	// pass before any correction is written.
	OpBlockMove Op = "BlockMove"
	// OpPatch patches Live with Changes at Live's resourceVersion.
	OpPatch Op = "Patch"
	// OpCreate creates Object.
	OpCreate Op = "Create"
	// OpRecreate asks the server with a dry-run create whether it accepts
	// Object, then deletes Live (UID and resourceVersion preconditions),
	// waits for it to be gone, and creates Object: two writes.
	OpRecreate Op = "Recreate"
	// OpPrune deletes the unused replacement Live with UID and
	// resourceVersion preconditions, without waiting.
	OpPrune Op = "Prune"
	// OpConfirmUnused lists Users live in ID's namespace and stops the pass
	// if one of them references ID. It comes before every delete: "delete
	// only when unused" was decided from reads that may lag a user made
	// since (informers), and a user the delete would strand is worse than
	// a pass retried.
	OpConfirmUnused Op = "ConfirmUnused"
	// OpStop stops the pass's writes: a template ahead of the ones after it
	// in dependency order cannot be corrected (Message says why).
	OpStop Op = "Stop"
	// OpUnblockMove lifts the add-on's move block from the Cluster Live,
	// read again just before, if it still carries it.
	OpUnblockMove Op = "UnblockMove"
)

// Step is one write of a pass, as data: act makes the steps in the order
// given, and makes nothing else.
type Step struct {
	Op Op
	// Log is the capitalised line act logs before the write.
	Log string
	// ID names the object the step is about: the template it corrects, the
	// consumer it repoints, the replacement it prunes, the Cluster it
	// blocks.
	ID manifest.ID
	// Live is the live object the step writes: patched, deleted, or (a
	// recreate) deleted before Object is created; nil for a create.
	Live *unstructured.Unstructured
	// Object is the object a create or recreate makes.
	Object *unstructured.Unstructured
	// Changes are a patch's operations.
	Changes []diff.Change
	// Message says why an OpStop stops the writes.
	Message string
	// Users are the kinds an OpConfirmUnused lists.
	Users []schema.GroupKind
	// Chained is true when the step is one write of a correction of
	// several (a rotation's create, repoint and mark; a recreate; a prune
	// beside a repoint): a move that copies the namespace between them
	// would copy a half-done correction.
	Chained bool
}

// Writes is how many writes the step makes when it succeeds.
func (s Step) Writes() int {
	switch s.Op {
	case OpRecreate:
		return 2
	case OpStop, OpConfirmUnused:
		return 0
	}
	return 1
}

// ScriptInput is what Script needs besides the decisions.
type ScriptInput struct {
	Release Release
	// Clusters are the release's live Clusters.
	Clusters []*unstructured.Unstructured
	// Owners are, by template, the owners a replacement or a recreate of it
	// takes over: the live template's ownerReferences with each owner's
	// current UID, those gone left out (gathered for the templates whose
	// writes need them).
	Owners map[manifest.ID][]metav1.OwnerReference
}

// PassScript is every write of a pass, in order: the move blocks, the
// corrections and the clean-up (Steps), and the move blocks to lift when
// they end (see Lifts).
type PassScript struct {
	Steps []Step
	// Block are the Clusters the pass blocks before its first write,
	// Unblock those whose move block it lifts when it ends (see MoveBlock).
	Block, Unblock []*unstructured.Unstructured
}

// Script turns a pass's decisions into its steps, in crash-safe order:
// templates in dependency order (replacements and recreations before
// anything names them), up to the first template that stops the writes;
// then consumer references; then the superseded-by marks and their
// removal; then the clean-up of unused replacements. The move blocks come
// first, for the namespaces where the steps make a correction of several
// writes (DecideMoveBlock). A pass that may not write has no steps.
func Script(d Decisions, in ScriptInput) PassScript {
	if !d.Act {
		return PassScript{}
	}
	writes := correctionSteps(d, in)
	block := DecideMoveBlock(writes, in.Clusters)
	steps := make([]Step, 0, len(block.Block)+len(writes))
	for _, cl := range block.Block {
		steps = append(steps, Step{Op: OpBlockMove, ID: manifest.IDOf(cl), Live: cl,
			Log: "Blocking clusterctl move for the writes of this pass"})
	}
	return PassScript{Steps: append(steps, writes...), Block: block.Block, Unblock: block.Unblock}
}

// correctionSteps are the writes of the corrections and the clean-up, in
// the order Script gives.
func correctionSteps(d Decisions, in ScriptInput) []Step {
	var steps []Step
	for _, t := range d.Templates {
		if t.StopsWrites() {
			return append(steps, Step{Op: OpStop, ID: t.ID, Message: fmt.Sprintf("%s/%s: %s", t.ID.Kind, t.ID.Name, t.Message)})
		}
		steps = append(steps, templateSteps(t, in)...)
	}
	for _, cp := range d.Consumers {
		if len(cp.Changes) > 0 {
			steps = append(steps, Step{Op: OpPatch, ID: cp.ID, Live: cp.Live, Changes: cp.Changes, Chained: true,
				Log: "Repointing template references"})
		}
	}
	for _, t := range d.Templates {
		switch {
		case t.Needs(WriteMarkSuperseded):
			steps = append(steps, Step{Op: OpPatch, ID: t.ID, Live: t.Live, Changes: MarkChanges(t), Chained: true,
				Log: "Marking template superseded by " + t.RenameTo()})
		case t.Needs(WriteUnmark):
			steps = append(steps, Step{Op: OpPatch, ID: t.ID, Live: t.Live, Changes: UnmarkChanges(), Chained: true,
				Log: "Template matches the manifest again; removing its superseded-by mark"})
		}
	}
	for _, o := range d.Prune {
		steps = append(steps, confirmUnused(manifest.IDOf(o)),
			Step{Op: OpPrune, ID: manifest.IDOf(o), Live: o, Chained: true, Log: "Deleting unused replacement"})
	}
	return steps
}

// templateSteps are a template's own writes.
func templateSteps(t TemplatePlan, in ScriptInput) []Step {
	switch {
	case t.Needs(WritePatch):
		return []Step{{Op: OpPatch, ID: t.ID, Live: t.Live, Changes: PatchChanges(t, in.Release.Ref),
			Log: "Correcting template in place"}}
	case t.Needs(WriteCreateReplacement):
		obj := BuildReplacement(t.Desired, t.Live, t.RenameTo(), in.Owners[t.ID], in.Release)
		return []Step{{Op: OpCreate, ID: t.ID, Object: obj, Chained: true, Log: "Creating replacement template " + t.RenameTo()}}
	case t.Needs(WriteDelete):
		obj := BuildRecreate(t.Desired, t.Live, in.Owners[t.ID], in.Release, t.DriftDigest)
		return []Step{confirmUnused(t.ID), {Op: OpRecreate, ID: t.ID, Live: t.Live, Object: obj, Chained: true, Log: "Recreating template"}}
	case t.Needs(WriteCreate):
		obj := BuildRecreate(t.Desired, nil, ClusterOwners(in.Clusters, t.Desired.GetNamespace()), in.Release, t.DriftDigest)
		return []Step{{Op: OpCreate, ID: t.ID, Object: obj, Log: "Creating missing template from the release manifest"}}
	}
	return nil
}

// confirmUnused is the fresh read before the delete of id.
func confirmUnused(id manifest.ID) Step {
	return Step{Op: OpConfirmUnused, ID: id, Users: manifest.UserKinds()}
}

// ClusterOwners returns non-controller ownerReferences to the release's
// live Clusters in namespace, the owner Cluster API's controllers give
// templates, for a template in namespace that must be created from the
// manifest alone. An ownerReference names an object in the dependent's own
// namespace: one naming a Cluster elsewhere would point at nothing, and the
// garbage collector deletes an object whose owners are all absent.
func ClusterOwners(clusters []*unstructured.Unstructured, namespace string) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, cl := range clusters {
		if cl.GetNamespace() != namespace {
			continue
		}
		out = append(out, metav1.OwnerReference{
			APIVersion: cl.GetAPIVersion(), Kind: cl.GetKind(), Name: cl.GetName(), UID: cl.GetUID(),
		})
	}
	return out
}

// Progress is what act made of a pass's steps.
type Progress struct {
	// Writes counts the corrections' writes made (the prunes are not
	// counted: they correct nothing).
	Writes int
	// Pruned are the replacements the clean-up deleted (one found gone
	// counts as deleted).
	Pruned []manifest.ID
	// Err is the first step that failed; the steps after it were not made.
	Err error
}

// Lifts returns the move blocks to lift when a pass's steps end (each
// OpUnblockMove): all of Unblock, the blocks this pass set and those an
// earlier pass left, except while a retry will go on with the correction
// they guard. Then every block stays, so that a waiting `clusterctl move`
// never copies the correction half done, and a retry does not set and
// lift the same block again:
//   - after any write under the blocks (a correction or a prune): the
//     namespace is half corrected, and the next pass, which goes on even
//     if clusterctl has paused the Cluster since (PausedClusters),
//     finishes the correction and lifts them;
//   - after a failure that may pass (ErrorMayPass: a 5xx, a 429, a
//     timeout, a lost answer, whose write may even have been stored) or a
//     lost race (ErrorConflict: a 409): the pass is retried with back-off,
//     reads again, and finds its own blocks in place.
//
// A pass that failed otherwise before its first write (a template whose
// correction failed, a refusal, a Cluster found paused or replaced) lifts
// them all: the correction does not go on until someone acts, and holding
// `clusterctl move` meanwhile would hold it for as long as that takes.
func (s PassScript) Lifts(p Progress) []Step {
	if p.Err != nil {
		switch ClassifyError(p.Err) {
		case ErrorMayPass, ErrorConflict:
			return nil
		}
		if p.Writes+len(p.Pruned) > 0 {
			return nil
		}
	}
	steps := make([]Step, 0, len(s.Unblock))
	for _, cl := range s.Unblock {
		steps = append(steps, Step{Op: OpUnblockMove, ID: manifest.IDOf(cl), Live: cl,
			Log: "Lifting the move block of this pass"})
	}
	return steps
}

// KeptBlocks counts the move blocks a failed pass keeps (see Lifts).
func (s PassScript) KeptBlocks(p Progress) int {
	return len(s.Unblock) - len(s.Lifts(p))
}

package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	flag "github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/templatedrift/template-drift-controller/internal/kustomization"
)

// repository says where a change comes from when it is a folder of the
// fleet repository, checked out in the current directory: --path, built
// as kustomize-controller builds it, with the settings and postBuild
// substitutions of --kustomization.
type repository struct {
	path, kustomization string
}

func (r *repository) bind(fs *flag.FlagSet) {
	fs.StringVar(&r.path, "path", "", "A folder of the fleet repository, under the current directory: preview every HelmRelease its kustomize build holds, with the ConfigMaps and Secrets it generates.")
	fs.StringVar(&r.kustomization, "kustomization", "", "[NAMESPACE/]NAME of the Flux Kustomization that applies the folder: its patches, targetNamespace and postBuild substitutions are applied, and its spec.path is the folder unless --path says.")
}

// set reports whether the change comes from the repository.
func (r *repository) set() bool {
	return r.path != "" || r.kustomization != ""
}

// proposals builds the folder and reads the change from the build. The
// build is confined to the current directory, as kustomize-controller
// confines it to the source's root.
func (r *repository) proposals(ctx context.Context, c client.Client, ns string) (*proposals, error) {
	dir, source := r.path, "--path "+r.path
	var ks *kustomizev1.Kustomization
	if r.kustomization != "" {
		var err error
		if ks, err = r.get(ctx, c, ns); err != nil {
			return nil, err
		}
		if dir == "" {
			dir = filepath.Join(".", filepath.FromSlash(ks.Spec.Path))
		}
		source = fmt.Sprintf("Kustomization %s/%s (%s)", ks.Namespace, ks.Name, dir)
		if ks.Spec.TargetNamespace != "" {
			ns = ks.Spec.TargetNamespace
		}
	}
	objs, err := kustomization.Build(ctx, c, ".", dir, ks)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return newProposals(source, objs, ns)
}

// get reads the Kustomization; a name without a namespace is in ns.
func (r *repository) get(ctx context.Context, c client.Reader, ns string) (*kustomizev1.Kustomization, error) {
	key := client.ObjectKey{Namespace: ns, Name: r.kustomization}
	if before, after, ok := strings.Cut(r.kustomization, "/"); ok {
		key = client.ObjectKey{Namespace: before, Name: after}
	}
	ks := &kustomizev1.Kustomization{}
	if err := c.Get(ctx, key, ks); err != nil {
		return nil, fmt.Errorf("failed to get Kustomization %s: %w", key, err)
	}
	return ks, nil
}

// liveHelmReleases are the HelmReleases the proposals hold (only the one
// named, when only is set), in namespace/name order: the live one where
// the cluster has it, else the proposed one, which isNew then names.
func (p *proposals) liveHelmReleases(ctx context.Context, c client.Reader, only string) (hrs []helmv2.HelmRelease, isNew map[string]bool, err error) {
	keys := make([]string, 0, len(p.helmReleases))
	for key, hr := range p.helmReleases {
		if only == "" || hr.Name == only {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil, nil, fmt.Errorf("%s holds no HelmRelease %s", p.source, only)
	}
	slices.Sort(keys)
	isNew = map[string]bool{}
	for _, key := range keys {
		proposed := p.helmReleases[key]
		live := helmv2.HelmRelease{}
		err := c.Get(ctx, client.ObjectKeyFromObject(proposed), &live)
		switch {
		case apierrors.IsNotFound(err):
			live = *proposed.DeepCopy()
			isNew[key] = true
		case err != nil:
			return nil, nil, fmt.Errorf("failed to get HelmRelease %s: %w", key, err)
		}
		hrs = append(hrs, live)
	}
	return hrs, isNew, nil
}

package cli

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// proposedValues reads a HelmRelease's valuesFrom as the change would
// leave them: a ConfigMap or Secret that the proposals hold (a generated
// values file under its new hashed name, or one the change edits) is
// read from them, any other from the cluster.
type proposedValues struct {
	client.Client
	objects map[string]*unstructured.Unstructured
}

// withProposedValues is c answering for the ConfigMaps and Secrets among
// objs first; c itself when there are none.
func withProposedValues(c client.Client, objs []*unstructured.Unstructured) client.Client {
	p := proposedValues{Client: c, objects: map[string]*unstructured.Unstructured{}}
	for _, o := range objs {
		if o.GetAPIVersion() == "v1" && (o.GetKind() == "ConfigMap" || o.GetKind() == "Secret") {
			p.objects[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = o
		}
	}
	if len(p.objects) == 0 {
		return c
	}
	return p
}

func (p proposedValues) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	var kind string
	switch obj.(type) {
	case *corev1.ConfigMap:
		kind = "ConfigMap"
	case *corev1.Secret:
		kind = "Secret"
	}
	u, ok := p.objects[kind+"/"+key.Namespace+"/"+key.Name]
	if !ok {
		return p.Client.Get(ctx, key, obj, opts...)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return fmt.Errorf("the proposed %s %s: %w", kind, key, err)
	}
	if s, ok := obj.(*corev1.Secret); ok {
		// The API server folds stringData into data.
		for k, v := range s.StringData {
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			s.Data[k] = []byte(v)
		}
		s.StringData = nil
	}
	return nil
}

package controllers

// The RBAC markers below are the controller's least-privilege ClusterRole;
// `make manifests` turns them into config/rbac/role.yaml, and the Helm chart's
// ClusterRole is tested against that file. No wildcards: RBAC cannot glob
// resource names, so the template kinds are the concrete resources of the
// default --template-kinds (Metal3, kubeadm and RKE2); the chart's
// templateKinds.rbac value extends them for other providers.
//
// Leader election Leases are not here: they are a namespaced Role in the
// controller's own namespace (config/rbac/leader_election_role.yaml).

// HelmReleases are read and watched; only the status is written.
// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases,verbs=get;list;watch
// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases/status,verbs=get;patch

// Helm release storage Secrets (metadata list + get, and a metadata-only
// watch of those labelled owner=helm, which serves the passes' reads) and
// spec.kubeConfig secretRefs. Read-only: the controller never writes a
// Secret, and never caches Secret data.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch

// spec.serviceAccountName (and --default-service-account) are impersonated,
// as helm-controller does. Users and groups are never impersonated.
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=impersonate

// Events on HelmReleases, through either events API.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// The templates the controller may correct (patch in place, rotate, or
// recreate), for the default --template-kinds.
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machinetemplates;metal3datatemplates,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigtemplates;rke2configtemplates,verbs=get;list;watch;create;patch;delete

// The consumers whose template references are repointed, and the Clusters,
// whose pause state and ownership are read and whose one write is
// clusterctl's block-move annotation, set for the length of a pass that
// makes several writes in their namespace.
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinedeployments;machinepools,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=kubeadmcontrolplanes;rke2controlplanes,verbs=get;list;watch;patch

// The objects that only use templates, listed to tell whether a template is
// in use before a delete or a clean-up: Cluster API's MachineSets and
// CAPM3's Metal3DataClaims and Metal3Data. Never written.
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinesets,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3dataclaims;metal3datas,verbs=get;list;watch

// The metadata of CustomResourceDefinitions, watched to learn when a kind
// the controller reads is installed or removed (a provider installed after
// the add-on). Without it, a kind not served is asked again every five
// minutes.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=list;watch

// The metadata of RBAC objects, watched so that an impersonated account's
// rights, once reviewed, are kept until one changes (watchRBAC). Without
// it, they are asked again every --access-review-ttl.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings;clusterroles;clusterrolebindings,verbs=list;watch

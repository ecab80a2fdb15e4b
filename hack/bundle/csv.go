/*
Copyright The nginx-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// packageName is the OLM package, and the prefix of every CSV name (<package>.v<semver>).
const packageName = "nginx-operator"

//go:embed icon.svg
var icon []byte

// csvDescription is the long description OLM's console and OperatorHub show (Markdown).
const csvDescription = `nginx-operator runs nginx for you: an NginxOperator object becomes an nginx
Deployment and a Service, kept as declared (image, ports, environment, resources, Service
type and ports), with replicas either fixed or computed from a target QPS.

The NginxOperator API (operator.example.com) is served by an aggregated API server with its
own etcd, not by a CustomResourceDefinition: v1alpha2 is the preferred version, v1alpha1 is
deprecated and converted on the fly. A controller reconciles every NginxOperator.

Install it into the namespace %[1]s, where the apiserver finds its etcd by DNS name,
after creating that namespace and applying etcd there: etcd is a StatefulSet with a
persistent volume, which OLM cannot install. etcd accepts only TLS clients with a
certificate of its own CA, so its Secrets, the apiserver's etcd client certificate among
them, come first too (hack/deploy-certs.sh --etcd-only, or cert-manager). OLM creates the
apiserver's Service, its serving certificate and the APIServices itself.

Every install mode works: the controller reconciles NginxOperators in the OperatorGroup's
target namespaces only, with its permissions granted there. The API itself is cluster-wide
in every mode (one APIService per version, one install per cluster): NginxOperators
created in other namespaces are stored but not reconciled.`

// csvInputs is everything the CSV is made from besides the base.
type csvInputs struct {
	version        string // semantic, with or without the leading v
	minKubeVersion string
	examples       []*unstructured.Unstructured
}

// buildCSV assembles the ClusterServiceVersion from the base: the apiserver and
// controller Deployments as the install strategy, the base's RBAC as permissions, and
// the API the apiserver serves as owned API services.
func buildCSV(b *base, server *apiServer, in csvInputs) (*operatorsv1alpha1.ClusterServiceVersion, error) {
	v, err := semver.ParseTolerant(in.version)
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", in.version, err)
	}
	owned, err := ownedAPIServices(b, server)
	if err != nil {
		return nil, err
	}
	namespaced, cluster, err := permissions(b, server.deployment.Spec.Template.Spec.ServiceAccountName, confinedAccounts(b))
	if err != nil {
		return nil, err
	}
	deployments, operatorImage, images, err := installDeployments(b, server, namespaced, cluster)
	if err != nil {
		return nil, err
	}
	examples, err := almExamples(in.examples, owned)
	if err != nil {
		return nil, err
	}
	namespaceTemplate, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": b.namespace, "labels": b.namespaceLabels},
	})
	if err != nil {
		return nil, err
	}

	csv := &operatorsv1alpha1.ClusterServiceVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s.v%s", packageName, v),
			Annotations: map[string]string{
				"alm-examples":   examples,
				"capabilities":   "Basic Install",
				"categories":     "Application Runtime",
				"containerImage": operatorImage,
				"description":    "Runs nginx as a Deployment and a Service per NginxOperator, through an aggregated API server.",
				// The apiserver reaches etcd by a DNS name in this namespace.
				"operatorframework.io/suggested-namespace": b.namespace,
				// Lets OLM's console create the namespace with the base's labels (the
				// restricted Pod Security Standard).
				"operatorframework.io/suggested-namespace-template": string(namespaceTemplate),
			},
		},
		Spec: operatorsv1alpha1.ClusterServiceVersionSpec{
			DisplayName:    "nginx-operator",
			Description:    fmt.Sprintf(csvDescription, b.namespace),
			Version:        version.OperatorVersion{Version: v},
			MinKubeVersion: in.minKubeVersion,
			Maturity:       "alpha",
			Keywords:       []string{"nginx", "web server", "aggregated API server", "operator"},
			Provider:       operatorsv1alpha1.AppLink{Name: "The nginx-operator Authors"},
			Maintainers:    []operatorsv1alpha1.Maintainer{{Name: "The nginx-operator Authors", Email: "nginx-operator@example.com"}},
			Icon:           []operatorsv1alpha1.Icon{{Data: base64.StdEncoding.EncodeToString(icon), MediaType: "image/svg+xml"}},
			// The controller follows the OperatorGroup's target namespaces (--namespaces
			// from olm.targetNamespaces) and OLM grants its namespaced permissions there;
			// the API and the apiserver stay cluster-wide whatever the mode
			// (docs/olm.md, install modes).
			InstallModes: []operatorsv1alpha1.InstallMode{
				{Type: operatorsv1alpha1.InstallModeTypeOwnNamespace, Supported: true},
				{Type: operatorsv1alpha1.InstallModeTypeSingleNamespace, Supported: true},
				{Type: operatorsv1alpha1.InstallModeTypeMultiNamespace, Supported: true},
				{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: true},
			},
			APIServiceDefinitions: operatorsv1alpha1.APIServiceDefinitions{Owned: owned},
			InstallStrategy: operatorsv1alpha1.NamedInstallStrategy{
				StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
				StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{
					DeploymentSpecs:    deployments,
					Permissions:        namespaced,
					ClusterPermissions: cluster,
				},
			},
			RelatedImages: images,
		},
	}
	return csv, nil
}

// installDeployments returns the base's Deployments as the CSV's install strategy (the
// apiserver's adapted to OLM's serving certificate, the controller's to a self-signed
// metrics certificate), the operator image their containers run, and every image they
// name (the init container of the controller names the nginx pods' exporter image).
func installDeployments(b *base, server *apiServer, namespaced, cluster []operatorsv1alpha1.StrategyDeploymentPermissions) ([]operatorsv1alpha1.StrategyDeploymentSpec, string, []operatorsv1alpha1.RelatedImage, error) {
	accounts := map[string]bool{}
	for _, p := range append(append([]operatorsv1alpha1.StrategyDeploymentPermissions{}, namespaced...), cluster...) {
		accounts[p.ServiceAccountName] = true
	}
	var specs []operatorsv1alpha1.StrategyDeploymentSpec
	images, operatorImages := map[string]bool{}, map[string]bool{}
	for i := range b.deployments {
		d := b.deployments[i].DeepCopy()
		if d.Name == server.deployment.Name {
			if err := useOLMServingCert(d); err != nil {
				return nil, "", nil, err
			}
		}
		if err := useSelfSignedMetricsCert(d); err != nil {
			return nil, "", nil, err
		}
		if err := watchTargetNamespaces(d); err != nil {
			return nil, "", nil, err
		}
		// OLM creates a ServiceAccount only for a permissions entry.
		if account := d.Spec.Template.Spec.ServiceAccountName; !accounts[account] {
			return nil, "", nil, fmt.Errorf("Deployment %s runs as ServiceAccount %q, which has no permissions in the base, so OLM would not create it", d.Name, account)
		}
		for _, c := range d.Spec.Template.Spec.InitContainers {
			images[c.Image] = true
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			images[c.Image] = true
			operatorImages[c.Image] = true
		}
		specs = append(specs, operatorsv1alpha1.StrategyDeploymentSpec{Name: d.Name, Label: d.Labels, Spec: d.Spec})
	}
	var related []operatorsv1alpha1.RelatedImage
	for image := range images {
		name := image[strings.LastIndex(image, "/")+1:]
		name, _, _ = strings.Cut(name, ":")
		name, _, _ = strings.Cut(name, "@")
		related = append(related, operatorsv1alpha1.RelatedImage{Name: name, Image: image})
	}
	sort.Slice(related, func(i, j int) bool { return related[i].Image < related[j].Image })
	if len(operatorImages) != 1 {
		// The apiserver and the controller ship in one image; the CSV's containerImage names it.
		return nil, "", nil, fmt.Errorf("the containers of the base's Deployments run %d images, expected the one operator image: %v", len(operatorImages), operatorImages)
	}
	var operatorImage string
	for image := range operatorImages {
		operatorImage = image
	}
	return specs, operatorImage, related, nil
}

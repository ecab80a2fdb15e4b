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
	"fmt"
	"os"

	"golang.org/x/mod/modfile"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// options are the inputs of a bundle, as paths from the repository root.
type options struct {
	baseDir, samplesDir, toolsGoMod string
	// The operator's version (pkg/version), the CSV's spec.version.
	version string
}

// generate renders the base and returns every file of the bundle, and the objects of the
// base that the cluster admin must apply before installing it.
func generate(opts options) (bundleFiles, []string, error) {
	objects, err := renderBase(opts.baseDir)
	if err != nil {
		return nil, nil, err
	}
	b, err := splitBase(objects)
	if err != nil {
		return nil, nil, err
	}
	server, err := findAPIServer(b)
	if err != nil {
		return nil, nil, err
	}
	prerequisites, err := b.prerequisites(server.service)
	if err != nil {
		return nil, nil, err
	}
	examples, err := readExamples(opts.samplesDir)
	if err != nil {
		return nil, nil, err
	}
	minKube, err := testedKubeRelease(opts.toolsGoMod)
	if err != nil {
		return nil, nil, err
	}
	csv, err := buildCSV(b, server, csvInputs{version: opts.version, minKubeVersion: minKube, examples: examples})
	if err != nil {
		return nil, nil, err
	}

	files := bundleFiles{}
	if files["manifests/"+packageName+".clusterserviceversion.yaml"], err = toYAML(csvHeader, csv); err != nil {
		return nil, nil, err
	}
	for _, obj := range b.extraManifests {
		obj = obj.DeepCopy()
		obj.SetNamespace("") // OLM creates it in the install namespace.
		if files["manifests/"+manifestFileName(obj)], err = toYAML(generatedHeader, obj.Object); err != nil {
			return nil, nil, err
		}
	}
	annotations := bundleAnnotations()
	metadata, err := yaml.Marshal(map[string]any{"annotations": annotations})
	if err != nil {
		return nil, nil, err
	}
	files["metadata/annotations.yaml"] = append([]byte(generatedHeader), metadata...)
	files["bundle.Dockerfile"] = []byte(bundleDockerfile(annotations))
	return files, prerequisites, nil
}

// testedKubeRelease is the minKubeVersion: the Kubernetes minor release whose binaries
// hack/tools builds and every test runs against (k8s.io/kubernetes in its go.mod). It is
// also a real lower bound: the apiserver's admission chain watches
// MutatingAdmissionPolicies, which are GA from 1.36.
func testedKubeRelease(goModPath string) (string, error) {
	data, err := os.ReadFile(goModPath)
	if err != nil {
		return "", err
	}
	mod, err := modfile.ParseLax(goModPath, data, nil)
	if err != nil {
		return "", err
	}
	for _, r := range mod.Require {
		if r.Mod.Path == "k8s.io/kubernetes" {
			v, err := utilversion.ParseSemantic(r.Mod.Version)
			if err != nil {
				return "", fmt.Errorf("%s: k8s.io/kubernetes %s: %w", goModPath, r.Mod.Version, err)
			}
			return fmt.Sprintf("%d.%d.0", v.Major(), v.Minor()), nil
		}
	}
	return "", fmt.Errorf("%s does not require k8s.io/kubernetes", goModPath)
}

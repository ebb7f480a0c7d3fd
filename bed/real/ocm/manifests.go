package ocm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// The configuration OCM's operators render their manifest templates with.
// hubConfig mirrors the fields of the module's manifests.HubConfig, and
// klusterletConfig those of the klusterlet operator's klusterletConfig, that
// the templates read -- the module cannot be imported (it is a main module
// on Kubernetes libraries older than baton's). Rendering runs with
// missingkey=error on these structs, so a template reading a field they lack
// fails loudly instead of rendering an empty value.

type hubConfig struct {
	ClusterManagerName                string
	ClusterManagerNamespace           string
	OperatorNamespace                 string
	RegistrationImage                 string
	RegistrationAPIServiceCABundle    string
	WorkImage                         string
	Replica                           int32
	HostedMode                        bool
	RegistrationWebhook               webhook
	WorkWebhook                       webhook
	RegistrationFeatureGates          []string
	AgentImage                        string
	ClusterImporterEnabled            bool
	ClusterProfileEnabled             bool
	AutoApproveUsers                  string
	ImagePullSecret                   string
	ResourceRequirementResourceType   string
	ResourceRequirements              []byte
	ManagedClusterIdentityCreatorRole string
	HubClusterArn                     string
	EnabledRegistrationDrivers        string
	AutoApprovedCSRUsers              string
	AutoApprovedARNPatterns           string
	AwsResourceTags                   string
	Labels                            map[string]string
	LabelsString                      string
}

type webhook struct {
	IsIPFormat bool
	Port       int32
	Address    string
}

type klusterletConfig struct {
	KlusterletName                              string
	KlusterletNamespace                         string
	AgentNamespace                              string
	AgentID                                     string
	RegistrationImage                           string
	WorkImage                                   string
	SingletonImage                              string
	RegistrationServiceAccount                  string
	WorkServiceAccount                          string
	ClusterName                                 string
	ExternalServerURL                           string
	HubKubeConfigSecret                         string
	MultipleHubs                                bool
	BootStrapKubeConfigSecret                   string
	BootStrapKubeConfigSecrets                  []string
	HubConnectionTimeoutSeconds                 int32
	Replica                                     int32
	ClientCertExpirationSeconds                 int32
	ClusterAnnotationsString                    string
	RegistrationKubeAPIQPS                      float32
	RegistrationKubeAPIBurst                    int32
	WorkKubeAPIQPS                              float32
	WorkKubeAPIBurst                            int32
	WorkHubKubeAPIQPS                           float32
	WorkHubKubeAPIBurst                         int32
	AppliedManifestWorkEvictionGracePeriod      string
	WorkStatusSyncInterval                      string
	AgentKubeAPIQPS                             float32
	AgentKubeAPIBurst                           int32
	ExternalManagedKubeConfigRegistrationSecret string
	ExternalManagedKubeConfigWorkSecret         string
	ExternalManagedKubeConfigAgentSecret        string
	InstallMode                                 string
	MaxCustomClusterClaims                      int
	ReservedClusterClaimSuffixes                string
	PriorityClassName                           string
	RegistrationFeatureGates                    []string
	WorkFeatureGates                            []string
	HubApiServerHostAlias                       *hostAlias //nolint:revive // the template's name
	ResourceRequirementResourceType             string
	ResourceRequirements                        []byte
	Labels                                      map[string]string
	RegistrationDriver                          registrationDriver
	ManagedClusterRoleArn                       string
	ManagedClusterRoleSuffix                    string
}

type hostAlias struct{ IP, Hostname string }

type registrationDriver struct {
	AuthType string
	AwsIrsa  struct{ HubClusterArn, ManagedClusterArn string }
}

// templateFuncs are the functions the templates call beyond text/template's
// own (library-go's assets package provides them to the operators).
var templateFuncs = template.FuncMap{
	"indent": func(spaces int, data []byte) string {
		pad := strings.Repeat(" ", spaces)
		return pad + strings.ReplaceAll(string(data), "\n", "\n"+pad)
	},
}

// render renders one of the module's manifest files (a path under
// manifests/) with config and decodes what it holds; empty documents -- a
// template whose condition left nothing -- are dropped.
func render(moduleDir, file string, config any) ([]*unstructured.Unstructured, error) {
	return renderModuleFile(moduleDir, filepath.Join("manifests", file), config)
}

// renderModuleFile renders a template at a path inside the module.
func renderModuleFile(moduleDir, file string, config any) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(filepath.Join(moduleDir, file))
	if err != nil {
		return nil, fmt.Errorf("OCM's manifest %s: %w", file, err)
	}
	t, err := template.New(file).Funcs(templateFuncs).Option("missingkey=error").Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("OCM's manifest %s: %w", file, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, config); err != nil {
		return nil, fmt.Errorf("OCM's manifest %s: %w", file, err)
	}
	objects, err := decode(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("OCM's manifest %s, rendered: %w", file, err)
	}
	for _, o := range objects {
		dropRemovals(o)
	}
	return objects, nil
}

// dropRemovals drops the labels and annotations whose key ends in "-":
// library-go's appliers, which OCM's operators use, read such a key as
// "remove this key" (the registration controller's ServiceAccount names
// its EKS role so when there is none). Server-side apply removes a key
// this field manager applied before once it is left out.
func dropRemovals(o *unstructured.Unstructured) {
	for _, field := range []string{"labels", "annotations"} {
		values, found, err := unstructured.NestedStringMap(o.Object, "metadata", field)
		if err != nil || !found {
			continue
		}
		for k := range values {
			if strings.HasSuffix(k, "-") {
				delete(values, k)
			}
		}
		if len(values) == 0 {
			unstructured.RemoveNestedField(o.Object, "metadata", field)
			continue
		}
		_ = unstructured.SetNestedStringMap(o.Object, values, "metadata", field)
	}
}

// decode reads a stream of YAML documents into objects.
func decode(data []byte) ([]*unstructured.Unstructured, error) {
	decoder := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []*unstructured.Unstructured
	for {
		object := &unstructured.Unstructured{}
		err := decoder.Decode(&object.Object)
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, err
		}
		if len(object.Object) == 0 {
			continue
		}
		if object.GetKind() == "" || object.GetName() == "" {
			return nil, fmt.Errorf("a document without kind or name: %v", object.Object)
		}
		objects = append(objects, object)
	}
}

// readFiles decodes plain manifests (CRDs, baton's hub RBAC) matching a
// glob, in name order.
func readFiles(pattern string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no manifest matches %s", pattern)
	}
	sort.Strings(files)
	var objects []*unstructured.Unstructured
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		decoded, err := decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		objects = append(objects, decoded...)
	}
	return objects, nil
}

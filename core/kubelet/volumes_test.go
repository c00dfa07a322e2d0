package kubelet

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

func configMapVolume(name, cm string, items ...corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Items: items,
	}}}
}

// TestConfigMapVolume mounts a ConfigMap into the config image, which prints
// the files and prints them again when they change: the content, then the
// update, which arrives at the pod's next sync (the periodic one, a minute
// later), as upstream.
func TestConfigMapVolume(t *testing.T) {
	n := newTestNode(t)
	n.createConfigMap(t, "settings", map[string]string{"color": "blue", "size": "L"})
	created := n.create(t, pod("cfg", withImage("config"), func(p *corev1.Pod) {
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/config"}}
		p.Spec.Volumes = []corev1.Volume{configMapVolume("cfg", "settings")}
	}))
	n.waitPod(t, "cfg", "Running", isRunningReady)
	n.waitLog(t, created, "hello", "file /etc/config/color: blue\nfile /etc/config/size: L\n")

	cm, err := n.configMaps().Get(context.Background(), "default", "settings")
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"color": "red", "size": "L"}
	if _, err := n.configMaps().Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	// The kubelet's watch sees it; the files change at the next sync.
	waitFor(t, "the kubelet's cache updated", func() bool {
		cm, err := n.getConfigMap(context.Background(), "default", "settings")
		return err == nil && cm.Data["color"] == "red"
	})
	mv := n.mountedVolume(created.UID, "cfg")
	if b, _ := fs.ReadFile(mv.fs, "color"); string(b) != "blue" {
		t.Errorf("the file changed before a sync: %q", b)
	}
	n.clk.Step(syncFrequency)
	waitFor(t, "the file updated", func() bool {
		b, _ := fs.ReadFile(mv.fs, "color")
		return string(b) == "red"
	})
	// The guest re-reads every 5 s and prints what changed.
	for {
		out, _ := n.logs(t, created, nil)
		if strings.Contains(out, "(changed)") {
			if !strings.Contains(out, "file /etc/config/color: red") {
				t.Fatalf("log = %q", out)
			}
			break
		}
		n.stepAfterSleep(t, 5*time.Second)
	}
}

func TestConfigMapVolumeItemsAndModes(t *testing.T) {
	n := newTestNode(t)
	n.createConfigMap(t, "settings", map[string]string{"color": "blue", "size": "L"})
	n.createSecret(t, "creds", map[string][]byte{"password": []byte("s3cr3t")})
	mode := int32(0o400)
	created := n.create(t, pod("cfg", func(p *corev1.Pod) {
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
			{Name: "cfg", MountPath: "/etc/config"}, {Name: "creds", MountPath: "/etc/creds"}, {Name: "info", MountPath: "/etc/podinfo"},
		}
		p.Labels = map[string]string{"app": "web", "tier": "front"}
		p.Spec.Volumes = []corev1.Volume{
			configMapVolume("cfg", "settings", corev1.KeyToPath{Key: "color", Path: "colors/main", Mode: &mode}),
			{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
			{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
				{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			}}}},
		}
	}))
	n.waitPod(t, "cfg", "Running", isRunningReady)
	read := func(vol, name string) (string, fs.FileMode) {
		t.Helper()
		mv := n.mountedVolume(created.UID, vol)
		b, err := fs.ReadFile(mv.fs, name)
		if err != nil {
			t.Fatalf("%s/%s: %v", vol, name, err)
		}
		st, _ := fs.Stat(mv.fs, name)
		return string(b), st.Mode()
	}
	if got, m := read("cfg", "colors/main"); got != "blue" || m != 0o400 {
		t.Errorf("item = %q %v", got, m)
	}
	if _, err := fs.Stat(n.mountedVolume(created.UID, "cfg").fs, "size"); err == nil {
		t.Error("a key not in items was projected")
	}
	if got, m := read("creds", "password"); got != "s3cr3t" || m != 0o644 {
		t.Errorf("secret = %q %v", got, m)
	}
	if got, _ := read("info", "labels"); got != "app=\"web\"\ntier=\"front\"" {
		t.Errorf("labels = %q", got)
	}
	if got, _ := read("info", "name"); got != "cfg" {
		t.Errorf("name = %q", got)
	}
	// The service account token volume the API server added: an unsigned
	// token naming the pod's service account, the root CA, the namespace.
	var sa string
	for _, v := range created.Spec.Volumes {
		if v.Projected != nil {
			sa = v.Name
		}
	}
	if sa == "" {
		t.Fatal("no projected service account volume")
	}
	tok, _ := read(sa, "token")
	parts := strings.Split(tok, ".")
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Sub string `json:"sub"`
	}
	if err != nil || json.Unmarshal(body, &claims) != nil || claims.Sub != "system:serviceaccount:default:default" {
		t.Errorf("token = %q (%s)", tok, body)
	}
	if ns, _ := read(sa, "namespace"); ns != "default" {
		t.Errorf("namespace = %q", ns)
	}
	if _, err := fs.Stat(n.mountedVolume(created.UID, sa).fs, "ca.crt"); err != nil {
		t.Errorf("ca.crt: %v", err)
	}
}

func TestFailedMount(t *testing.T) {
	tests := []struct {
		name    string
		volume  corev1.Volume
		message string
		fix     func(*testNode)
	}{
		{
			name:    "missing ConfigMap",
			volume:  configMapVolume("cfg", "settings"),
			message: `MountVolume.SetUp failed for volume "cfg" : configmap "settings" not found`,
			fix:     func(n *testNode) { n.createConfigMap(t, "settings", map[string]string{"color": "blue"}) },
		},
		{
			name:    "missing key",
			volume:  configMapVolume("cfg", "other", corev1.KeyToPath{Key: "shape", Path: "shape"}),
			message: `MountVolume.SetUp failed for volume "cfg" : configmap references non-existent config key: shape`,
		},
		{
			name:    "missing Secret",
			volume:  corev1.Volume{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
			message: `MountVolume.SetUp failed for volume "creds" : secret "creds" not found`,
			fix:     func(n *testNode) { n.createSecret(t, "creds", map[string][]byte{"password": []byte("x")}) },
		},
		{
			name:    "hostPath",
			volume:  corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}},
			message: `MountVolume.SetUp failed for volume "host" : hostPath volumes are not supported by kubetab`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newTestNode(t)
			n.createConfigMap(t, "other", map[string]string{"color": "blue"})
			n.create(t, pod("cfg", func(p *corev1.Pod) {
				p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: tt.volume.Name, MountPath: "/mnt"}}
				p.Spec.Volumes = []corev1.Volume{tt.volume}
			}))
			n.waitEvents(t, "cfg", EventFailedMountVolume, tt.message, 1)
			p := n.waitPod(t, "cfg", "ContainerCreating", func(p *corev1.Pod) bool { return waitingOf(p, "hello") == ReasonContainerCreating })
			if p.Status.Phase != corev1.PodPending || len(n.rt.ListContainers(criFilter(p))) != 0 {
				t.Errorf("status: %s", describe(p))
			}
			// Retried after 0.5 s, 1 s, 2 s ...
			n.clk.Step(volumeRetryInitial)
			n.waitEvents(t, "cfg", EventFailedMountVolume, tt.message, 2)
			if tt.fix == nil {
				return
			}
			tt.fix(n)
			waitFor(t, "the kubelet's cache updated", func() bool {
				_, err := n.volumeFiles(context.Background(), p, &p.Spec.Volumes[0], t0)
				return err == nil
			})
			n.clk.Step(2 * volumeRetryInitial)
			n.waitPod(t, "cfg", "Running", isRunningReady)
		})
	}
}

// TestEmptyDirShared: a writer container leaves a file in the emptyDir, the
// reader (the config image, reading /data every 5 s) prints it. Both media
// are a directory in memory (no host directory, so no guest reaches a host
// file through it); the volume goes with the pod.
func TestEmptyDirShared(t *testing.T) {
	for _, medium := range []corev1.StorageMedium{corev1.StorageMediumDefault, corev1.StorageMediumMemory} {
		t.Run("medium="+string(medium), func(t *testing.T) {
			n := newTestNode(t)
			created := n.create(t, pod("shared", func(p *corev1.Pod) {
				p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
				mount := []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
				p.Spec.Containers = []corev1.Container{
					{Name: "writer", Image: "web", Args: []string{"--unhealthy"}, VolumeMounts: mount},
					{Name: "reader", Image: "config", Args: []string{"/data"}, VolumeMounts: mount},
				}
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium}}}}
			}))
			n.waitPod(t, "shared", "writer done", func(p *corev1.Pod) bool {
				t := containerStatus(p, "writer").State.Terminated
				return t != nil && t.ExitCode == 0 && containerStatus(p, "reader").State.Running != nil
			})
			for {
				out, _ := n.logs(t, created, &corev1.PodLogOptions{Container: "reader"})
				if strings.Contains(out, "file /data/unhealthy: unhealthy") {
					break
				}
				n.stepAfterSleep(t, 5*time.Second)
			}
			mv := n.mountedVolume(created.UID, "data")
			if mv == nil || mv.mem == nil {
				t.Fatalf("emptyDir: %+v, want a MemDir", mv)
			}
			if data, err := mv.mem.ReadFile("unhealthy"); err != nil || !strings.Contains(string(data), "unhealthy") {
				t.Fatalf("the writer's file in memory: %q %v", data, err)
			}
			if err := n.c.Pods().Delete(context.Background(), "default", "shared", nil); err != nil {
				t.Fatal(err)
			}
			n.waitGone(t, "shared")
			waitFor(t, "the emptyDir forgotten", func() bool { return n.mountedVolume(created.UID, "data") == nil })
		})
	}
}

func criFilter(p *corev1.Pod) cri.ContainerFilter { return cri.ContainerFilter{PodUID: string(p.UID)} }

package kubelet

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync/atomic"
	"testing/fstest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// The volume manager (upstream: pkg/kubelet/volumemanager, its reconciler
// and the volume plugins under pkg/volume: emptydir, configmap, secret,
// downwardapi, projected). Before a pod's containers are created, every
// volume a container mounts is "set up"; the CRI then mounts it at each
// mountPath:
//
//	volume            set up as                                   in the container
//	emptyDir          a directory <root>/pods/<uid>/volumes/      writable, shared by the pod's
//	                  kubernetes.io~empty-dir/<name>              containers, deleted with the pod
//	configMap         the keys (or items) as files, from the      read-only; follows updates
//	secret            kubelet's watch cache                       at the pod's next sync
//	downwardAPI       pod fields and resources as files
//	projected         all of the above in one directory, plus a serviceAccountToken
//
// A volume that cannot be set up (its ConfigMap does not exist) keeps the pod
// in ContainerCreating with a FailedMount event in upstream's words,
//
//	MountVolume.SetUp failed for volume "cfg" : configmap "x" not found
//
// and is tried again with a back-off (0.5 s doubling to about 2 min, as the
// volume manager's operations). Once set up, the read-only volumes are set up
// again at every sync of the pod ("remount"): that is how a changed
// ConfigMap reaches the files of a running container, at most a sync period
// (1 min) after the change. The files are swapped all at once, as upstream's
// atomic writer does with its ..data symlink, so a reader never sees half an
// update. A volume that fails to refresh keeps its last content.
//
// An emptyDir is a directory in memory (cri.MemDir), natively as in a tab:
// upstream it is a directory of the node (or a tmpfs for medium: Memory), but
// a host directory would let a guest reach host files through a symlink, and
// a tab has no file system. sizeLimit is not enforced (upstream the eviction
// manager does).

// Back-off of a volume's set up, upstream's exponential back-off of volume
// operations (pkg/util/goroutinemap/exponentialbackoff).
const (
	volumeRetryInitial = 500 * time.Millisecond
	volumeRetryMax     = 2*time.Minute + 2*time.Second
)

// serviceAccountTokenIssuer is the iss claim of projected tokens.
const serviceAccountTokenIssuer = "https://kubernetes.default.svc.cluster.local"

// mountedVolume is a volume of a pod that was set up.
type mountedVolume struct {
	name     string
	mem      *cri.MemDir // emptyDir
	fs       *swapFS     // configMap, secret, downwardAPI, projected
	readOnly bool        // the plugin's own (configMap ...): mounts are read-only whatever the pod says
	setUpAt  time.Time   // last successful set up
}

// swapFS is a read-only file system whose content is replaced whole: the
// current fstest.MapFS is never modified, only swapped for a new one.
type swapFS struct {
	cur atomic.Pointer[fstest.MapFS]
}

func newSwapFS() *swapFS {
	s := &swapFS{}
	s.cur.Store(&fstest.MapFS{})
	return s
}

func (s *swapFS) Open(name string) (fs.File, error) { return s.cur.Load().Open(name) }

func (s *swapFS) set(m fstest.MapFS) { s.cur.Store(&m) }

// projection is the files of a volume being set up, by path inside it.
type projection map[string]*fstest.MapFile

func (p projection) add(name string, data []byte, mode int32, modTime time.Time) {
	p[name] = &fstest.MapFile{Data: data, Mode: fs.FileMode(mode) & fs.ModePerm, ModTime: modTime}
}

// volumesInUse lists the pod's volumes that some container mounts: the only
// ones the volume manager sets up.
func volumesInUse(pod *corev1.Pod) []*corev1.Volume {
	used := map[string]bool{}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			for _, m := range c.VolumeMounts {
				used[m.Name] = true
			}
		}
	}
	var out []*corev1.Volume
	for i := range pod.Spec.Volumes {
		if used[pod.Spec.Volumes[i].Name] {
			out = append(out, &pod.Spec.Volumes[i])
		}
	}
	return out
}

// mountVolumes sets up (or refreshes) every volume the pod's containers use.
// It reports whether all of them are ready; if not, the pod should be synced
// again after the returned delay.
func (kl *Kubelet) mountVolumes(ctx context.Context, pod *corev1.Pod) (bool, time.Duration) {
	ready := true
	var retry time.Duration
	for _, v := range volumesInUse(pod) {
		key := string(pod.UID) + "/" + v.Name
		mv := kl.mountedVolume(pod.UID, v.Name)
		if mv == nil {
			if in, left := kl.volumeBackOff.InBackOffSinceUpdate(key); in {
				ready = false
				retry = minPositive(retry, left)
				continue
			}
		}
		next, err := kl.setUpVolume(ctx, pod, v, mv)
		if err != nil {
			kl.recorder.Eventf(pod, corev1.EventTypeWarning, EventFailedMountVolume,
				"MountVolume.SetUp failed for volume %q : %v", v.Name, err)
			if mv == nil {
				kl.volumeBackOff.Next(key, kl.clock.Now())
				ready = false
				retry = minPositive(retry, kl.volumeBackOff.Get(key))
			}
			continue
		}
		if mv == nil {
			kl.setMountedVolume(pod.UID, next)
		}
	}
	return ready, retry
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

func (kl *Kubelet) mountedVolume(uid types.UID, name string) *mountedVolume {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil {
		return rec.volumes[name]
	}
	return nil
}

func (kl *Kubelet) setMountedVolume(uid types.UID, mv *mountedVolume) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if rec := kl.pods[uid]; rec != nil {
		if rec.volumes == nil {
			rec.volumes = map[string]*mountedVolume{}
		}
		rec.volumes[mv.name] = mv
	}
}

// setUpVolume sets up volume v, or refreshes mv, its earlier set up. It
// returns the mounted volume (mv itself on a refresh).
func (kl *Kubelet) setUpVolume(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, mv *mountedVolume) (*mountedVolume, error) {
	now := kl.clock.Now()
	if v.EmptyDir != nil {
		if mv != nil {
			return mv, nil // nothing to refresh
		}
		return &mountedVolume{name: v.Name, mem: cri.NewMemDir(), setUpAt: now}, nil
	}
	files, err := kl.volumeFiles(ctx, pod, v, now)
	if err != nil {
		return nil, err
	}
	if mv == nil {
		mv = &mountedVolume{name: v.Name, fs: newSwapFS(), readOnly: true}
	}
	mv.fs.set(fstest.MapFS(files))
	mv.setUpAt = now
	return mv, nil
}

// volumeFiles computes the files of a configMap, secret, downwardAPI or
// projected volume (upstream: each plugin's SetUpAt and MakePayload).
func (kl *Kubelet) volumeFiles(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, now time.Time) (projection, error) {
	files := projection{}
	switch {
	case v.ConfigMap != nil:
		src := v.ConfigMap
		mode := modeOr(src.DefaultMode, corev1.ConfigMapVolumeSourceDefaultMode)
		if err := kl.configMapFiles(ctx, pod, src.Name, src.Items, src.Optional, mode, files, now); err != nil {
			return nil, err
		}
	case v.Secret != nil:
		src := v.Secret
		mode := modeOr(src.DefaultMode, corev1.SecretVolumeSourceDefaultMode)
		if err := kl.secretFiles(ctx, pod, src.SecretName, src.Items, src.Optional, mode, files, now); err != nil {
			return nil, err
		}
	case v.DownwardAPI != nil:
		src := v.DownwardAPI
		mode := modeOr(src.DefaultMode, corev1.DownwardAPIVolumeSourceDefaultMode)
		if err := kl.downwardAPIFiles(pod, src.Items, mode, files, now); err != nil {
			return nil, err
		}
	case v.Projected != nil:
		mode := modeOr(v.Projected.DefaultMode, corev1.ProjectedVolumeSourceDefaultMode)
		var errs []error
		for _, s := range v.Projected.Sources {
			var err error
			switch {
			case s.ConfigMap != nil:
				err = kl.configMapFiles(ctx, pod, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, mode, files, now)
			case s.Secret != nil:
				err = kl.secretFiles(ctx, pod, s.Secret.Name, s.Secret.Items, s.Secret.Optional, mode, files, now)
			case s.DownwardAPI != nil:
				err = kl.downwardAPIFiles(pod, s.DownwardAPI.Items, mode, files, now)
			case s.ServiceAccountToken != nil:
				files.add(s.ServiceAccountToken.Path, kl.serviceAccountToken(pod, s.ServiceAccountToken, now), mode, now)
			default:
				err = errors.New("kubetab supports configMap, secret, downwardAPI and serviceAccountToken projections only")
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return nil, aggregate(errs)
		}
	case v.HostPath != nil:
		// A guest must not reach the host's files through a manifest: in
		// `kubetab cluster` that would be the machine the real kubectl
		// talks to.
		return nil, errors.New("hostPath volumes are not supported by kubetab")
	case v.PersistentVolumeClaim != nil:
		return nil, fmt.Errorf("persistentVolumeClaim %q: persistent volumes are not supported by kubetab yet", v.PersistentVolumeClaim.ClaimName)
	default:
		return nil, errors.New("this volume type is not supported by kubetab")
	}
	return files, nil
}

// aggregate joins errors as apimachinery's utilerrors.NewAggregate prints
// them: one error as itself, more as "[a, b]".
func aggregate(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}

func modeOr(m *int32, def int32) int32 {
	if m != nil {
		return *m
	}
	return def
}

// configMapFiles projects a ConfigMap (upstream: configmap.MakePayload):
// every key of data and binaryData as a file, or only the items, each at its
// path. A missing ConfigMap or key fails the volume unless optional.
func (kl *Kubelet) configMapFiles(ctx context.Context, pod *corev1.Pod, name string, items []corev1.KeyToPath, optional *bool, mode int32, files projection, now time.Time) error {
	cm, err := kl.getConfigMap(ctx, pod.Namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) && isTrue(optional) {
			return nil
		}
		return err
	}
	lookup := func(key string) ([]byte, bool) {
		if s, ok := cm.Data[key]; ok {
			return []byte(s), true
		}
		b, ok := cm.BinaryData[key]
		return b, ok
	}
	if len(items) == 0 {
		for k, v := range cm.Data {
			files.add(k, []byte(v), mode, now)
		}
		for k, v := range cm.BinaryData {
			files.add(k, v, mode, now)
		}
		return nil
	}
	for _, it := range items {
		data, ok := lookup(it.Key)
		if !ok {
			if isTrue(optional) {
				continue
			}
			return fmt.Errorf("configmap references non-existent config key: %s", it.Key)
		}
		files.add(it.Path, data, modeOr(it.Mode, mode), now)
	}
	return nil
}

// secretFiles is configMapFiles for a Secret (upstream: secret.MakePayload).
func (kl *Kubelet) secretFiles(ctx context.Context, pod *corev1.Pod, name string, items []corev1.KeyToPath, optional *bool, mode int32, files projection, now time.Time) error {
	s, err := kl.getSecret(ctx, pod.Namespace, name)
	if err != nil {
		if apierrors.IsNotFound(err) && isTrue(optional) {
			return nil
		}
		return err
	}
	if len(items) == 0 {
		for k, v := range s.Data {
			files.add(k, v, mode, now)
		}
		return nil
	}
	for _, it := range items {
		data, ok := s.Data[it.Key]
		if !ok {
			if isTrue(optional) {
				continue
			}
			return fmt.Errorf("secret references non-existent secret key: %s", it.Key)
		}
		files.add(it.Path, data, modeOr(it.Mode, mode), now)
	}
	return nil
}

// downwardAPIFiles writes pod fields and container resources as files
// (upstream: downwardapi.CollectData).
func (kl *Kubelet) downwardAPIFiles(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, mode int32, files projection, now time.Time) error {
	podIP := ""
	if res, ok := kl.podNetwork(pod.UID); ok {
		podIP = res.IP().String()
	}
	var errs []error
	for _, it := range items {
		var val string
		var err error
		switch {
		case it.FieldRef != nil:
			val, err = kl.podFieldValue(pod, it.FieldRef.FieldPath, podIP)
		case it.ResourceFieldRef != nil:
			var c *corev1.Container
			for i := range pod.Spec.Containers {
				if pod.Spec.Containers[i].Name == it.ResourceFieldRef.ContainerName {
					c = &pod.Spec.Containers[i]
				}
			}
			if c == nil {
				err = fmt.Errorf("container %s not found", it.ResourceFieldRef.ContainerName)
				break
			}
			val, err = kl.containerResourceValue(pod, c, it.ResourceFieldRef)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files.add(it.Path, []byte(val), modeOr(it.Mode, mode), now)
	}
	if len(errs) > 0 {
		return aggregate(errs)
	}
	return nil
}

// serviceAccountToken is a projected token: a JWT with the claims the API
// server's TokenRequest puts in one (issuer, the service account as subject,
// audience, expiry, the pod it is bound to). It is not signed ("alg":
// "none"), so the API server does not accept it: anyone could write one
// for any ServiceAccount, and a request bearing it gets 401 like any token
// the API server does not know. A guest can still decode it and see who it
// would be.
func (kl *Kubelet) serviceAccountToken(pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection, now time.Time) []byte {
	expiry := int64(3600)
	if p.ExpirationSeconds != nil {
		expiry = *p.ExpirationSeconds
	}
	aud := []string{serviceAccountTokenIssuer}
	if p.Audience != "" {
		aud = []string{p.Audience}
	}
	claims := map[string]any{
		"iss": serviceAccountTokenIssuer,
		"sub": "system:serviceaccount:" + pod.Namespace + ":" + pod.Spec.ServiceAccountName,
		"aud": aud,
		"iat": now.Unix(),
		"nbf": now.Unix(),
		"exp": now.Unix() + expiry,
		"kubernetes.io": map[string]any{
			"namespace":      pod.Namespace,
			"node":           map[string]string{"name": kl.nodeName},
			"pod":            map[string]string{"name": pod.Name, "uid": string(pod.UID)},
			"serviceaccount": map[string]string{"name": pod.Spec.ServiceAccountName},
		},
	}
	header, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	body, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	return []byte(enc.EncodeToString(header) + "." + enc.EncodeToString(body) + ".")
}

// unmountVolumes forgets a pod's volumes, every emptyDir with them
// (upstream: the volume manager's unmount, then cleanupOrphanedPodDirs).
func (kl *Kubelet) unmountVolumes(uid types.UID) {
	kl.mu.Lock()
	if rec := kl.pods[uid]; rec != nil {
		rec.volumes = nil
	}
	kl.mu.Unlock()
	kl.volumeBackOff.DeletePrefix(string(uid) + "/")
}

// containerMounts turns a container's volumeMounts into the CRI's mounts
// (upstream: makeMounts). The volumes must have been set up.
func (kl *Kubelet) containerMounts(pod *corev1.Pod, c *corev1.Container, env []cri.EnvVar) ([]cri.Mount, error) {
	vars := map[string]string{}
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	var out []cri.Mount
	for _, m := range c.VolumeMounts {
		mv := kl.mountedVolume(pod.UID, m.Name)
		if mv == nil {
			return nil, fmt.Errorf("cannot find volume %q to mount into container %q", m.Name, c.Name)
		}
		sub := m.SubPath
		if m.SubPathExpr != "" {
			sub = expand(m.SubPathExpr, vars)
		}
		if sub != "" && (path.IsAbs(sub) || strings.HasPrefix(path.Clean(sub), "..")) {
			return nil, fmt.Errorf("failed to prepare subPath for volumeMount %q of container %q", m.Name, c.Name)
		}
		mount := cri.Mount{ContainerPath: path.Clean(m.MountPath), ReadOnly: m.ReadOnly || mv.readOnly}
		switch {
		case mv.mem != nil:
			mount.Mem = mv.mem
			if sub != "" {
				// Upstream makes the subPath directory in the volume and
				// bind-mounts it.
				d, err := mv.mem.Sub(path.Clean(sub))
				if err != nil {
					return nil, fmt.Errorf("failed to prepare subPath for volumeMount %q of container %q: %v", m.Name, c.Name, err)
				}
				mount.Mem = d
			}
		default:
			var fsys fs.FS = mv.fs
			if sub != "" {
				// WASI mounts directories: a subPath naming one file (a
				// common way to place a single config file) cannot be
				// mounted.
				if st, err := fs.Stat(mv.fs, path.Clean(sub)); err == nil && !st.IsDir() {
					return nil, fmt.Errorf("failed to prepare subPath for volumeMount %q of container %q: kubetab mounts directories only, and %q is a file", m.Name, c.Name, sub)
				}
				sfs, err := fs.Sub(mv.fs, path.Clean(sub))
				if err != nil {
					return nil, fmt.Errorf("failed to prepare subPath for volumeMount %q of container %q", m.Name, c.Name)
				}
				fsys = sfs
			}
			mount.FS = fsys
			mount.ReadOnly = true
		}
		out = append(out, mount)
	}
	return out, nil
}

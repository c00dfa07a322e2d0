package registry

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The batch/v1 group: Jobs and CronJobs (pkg/registry/batch/{job,cronjob},
// pkg/apis/batch/v1/defaults.go, pkg/apis/batch/validation).

// --- jobs ---

type jobStrategy struct{}

// The label names Jobs used before batch.kubernetes.io/ (upstream still
// writes both; k8s.io/api has only the new ones).
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

const (
	maxParallelismForIndexedJob = 100000
	maxCompletionsForIndexedJob = 100000
)

// defaultJobSpec is the part of SetDefaults_Job that a Job gets.
func defaultJob(j *batchv1.Job) {
	s := &j.Spec
	if s.Completions == nil && s.Parallelism == nil {
		one, one2 := int32(1), int32(1)
		s.Completions, s.Parallelism = &one, &one2
	}
	if s.Parallelism == nil {
		one := int32(1)
		s.Parallelism = &one
	}
	if s.BackoffLimit == nil {
		limit := int32(6)
		if s.BackoffLimitPerIndex != nil {
			limit = math.MaxInt32
		}
		s.BackoffLimit = &limit
	}
	if s.CompletionMode == nil {
		m := batchv1.NonIndexedCompletion
		s.CompletionMode = &m
	}
	if s.Suspend == nil {
		f := false
		s.Suspend = &f
	}
	if pfp := s.PodFailurePolicy; pfp != nil {
		for _, rule := range pfp.Rules {
			for i := range rule.OnPodConditions {
				if rule.OnPodConditions[i].Status == "" {
					rule.OnPodConditions[i].Status = corev1.ConditionTrue
				}
			}
		}
	}
	if s.PodReplacementPolicy == nil {
		p := batchv1.TerminatingOrFailed
		if s.PodFailurePolicy != nil {
			p = batchv1.Failed
		}
		s.PodReplacementPolicy = &p
	}
	if s.ManualSelector == nil {
		f := false
		s.ManualSelector = &f
	}
	DefaultPodSpec(&s.Template.Spec)
}

// generateSelector labels the template with the Job's name and uid and
// selects on the uid, unless manualSelector is true (upstream job strategy
// generateSelectorIfNeeded). A Job without labels of its own then shows the
// template's (SetDefaults_Job).
func generateSelector(j *batchv1.Job) {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	if j.Spec.Template.Labels == nil {
		j.Spec.Template.Labels = map[string]string{}
	}
	for _, k := range []string{legacyJobNameLabel, batchv1.JobNameLabel} {
		if _, ok := j.Spec.Template.Labels[k]; !ok {
			j.Spec.Template.Labels[k] = j.Name
		}
	}
	for _, k := range []string{legacyControllerUIDLabel, batchv1.ControllerUidLabel} {
		if _, ok := j.Spec.Template.Labels[k]; !ok {
			j.Spec.Template.Labels[k] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(j.UID)
	}
}

func (jobStrategy) PrepareForCreate(obj runtime.Object) {
	j := obj.(*batchv1.Job)
	j.Status = batchv1.JobStatus{}
	defaultJob(j)
	generateSelector(j)
	if len(j.Labels) == 0 && len(j.Spec.Template.Labels) > 0 {
		j.Labels = map[string]string{}
		for k, v := range j.Spec.Template.Labels {
			j.Labels[k] = v
		}
	}
}

func (jobStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
	defaultJob(obj.(*batchv1.Job))
}

func (jobStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

// validateJobSpecCommon is upstream's validateJobSpec: what Jobs and the job
// templates of CronJobs share.
func validateJobSpecCommon(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		v    *int32
	}{{"parallelism", s.Parallelism}, {"completions", s.Completions}, {"backoffLimit", s.BackoffLimit}, {"ttlSecondsAfterFinished", s.TTLSecondsAfterFinished}} {
		if f.v != nil {
			errs = append(errs, validateNonNegative(int64(*f.v), p.Child(f.name))...)
		}
	}
	if s.ActiveDeadlineSeconds != nil {
		errs = append(errs, validateNonNegative(*s.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	indexed := s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion
	if s.BackoffLimitPerIndex != nil {
		errs = append(errs, validateNonNegative(int64(*s.BackoffLimitPerIndex), p.Child("backoffLimitPerIndex"))...)
		if !indexed {
			errs = append(errs, field.Invalid(p.Child("backoffLimitPerIndex"), *s.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
	}
	if s.CompletionMode != nil {
		if !indexed && *s.CompletionMode != batchv1.NonIndexedCompletion {
			errs = append(errs, field.NotSupported(p.Child("completionMode"), s.CompletionMode, []string{string(batchv1.NonIndexedCompletion), string(batchv1.IndexedCompletion)}))
		}
		if indexed {
			if s.Completions == nil {
				errs = append(errs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
			} else if *s.Completions > maxCompletionsForIndexedJob {
				errs = append(errs, field.Invalid(p.Child("completions"), *s.Completions, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxCompletionsForIndexedJob, batchv1.IndexedCompletion)))
			}
			if s.Parallelism != nil && *s.Parallelism > maxParallelismForIndexedJob {
				errs = append(errs, field.Invalid(p.Child("parallelism"), *s.Parallelism, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
			}
		}
	}
	if rp := s.PodReplacementPolicy; rp != nil {
		if s.PodFailurePolicy != nil {
			if *rp != batchv1.Failed {
				errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), *rp, []string{string(batchv1.Failed)}))
			}
		} else if *rp != batchv1.Failed && *rp != batchv1.TerminatingOrFailed {
			errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), *rp, []string{string(batchv1.Failed), string(batchv1.TerminatingOrFailed)}))
		}
	}
	errs = append(errs, validatePodTemplate(&s.Template, p.Child("template"))...)
	rpPath := p.Child("template", "spec", "restartPolicy")
	switch rp := s.Template.Spec.RestartPolicy; {
	case rp == corev1.RestartPolicyAlways || rp == "":
		errs = append(errs, field.Required(rpPath, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)))
	case rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever:
		errs = append(errs, field.NotSupported(rpPath, rp, []string{string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}))
	case s.PodFailurePolicy != nil && rp != corev1.RestartPolicyNever:
		errs = append(errs, field.Invalid(rpPath, rp, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)))
	}
	return errs
}

// validateJob is ValidateJob: metadata (names as ReplicationControllers'),
// the generated selector, and the spec.
func validateJob(j *batchv1.Job) field.ErrorList {
	errs := validateMeta(j, true)
	errs = append(errs, validateGeneratedSelector(j)...)
	p := field.NewPath("spec")
	errs = append(errs, validateJobSpecCommon(&j.Spec, p)...)
	if j.Spec.Selector == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		errs = append(errs, validateLabelSelector(j.Spec.Selector, p.Child("selector"))...)
	}
	if sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector); err == nil && !sel.Matches(labels.Set(j.Spec.Template.Labels)) {
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), j.Spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	if m := j.Spec.CompletionMode; m != nil && *m == batchv1.IndexedCompletion && j.Spec.Completions != nil && *j.Spec.Completions > 0 {
		host := fmt.Sprintf("%s-%d", j.Name, *j.Spec.Completions-1)
		if len(validation.IsDNS1123Label(host)) > 0 {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), j.Name, "will not able to create pod with invalid DNS label: "+host))
		}
	}
	return errs
}

// validateGeneratedSelector is ValidateGeneratedSelector: with a generated
// selector, the template must carry the Job's name and uid labels and the
// selector must select the uid.
func validateGeneratedSelector(j *batchv1.Job) field.ErrorList {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return nil
	}
	if j.Spec.Template.Labels == nil || j.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if j.UID == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	tp := field.NewPath("spec", "template", "metadata", "labels")
	for k, want := range map[string]string{
		legacyControllerUIDLabel: string(j.UID), legacyJobNameLabel: j.Name,
		batchv1.ControllerUidLabel: string(j.UID), batchv1.JobNameLabel: j.Name,
	} {
		if got, ok := j.Spec.Template.Labels[k]; !ok {
			errs = append(errs, field.Required(tp.Key(k), fmt.Sprintf("must be '%s'", want)))
		} else if got != want {
			errs = append(errs, field.Invalid(tp.Key(k), got, fmt.Sprintf("must be '%s'", want)))
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		return append(errs, field.Invalid(field.NewPath("spec", "selector"), j.Spec.Selector, "invalid label selector"))
	}
	if !sel.Matches(labels.Set{batchv1.ControllerUidLabel: string(j.UID)}) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

func (jobStrategy) Validate(obj runtime.Object) field.ErrorList {
	return validateJob(obj.(*batchv1.Job))
}

// ValidateUpdate is ValidateJobUpdate: most of a Job's spec is immutable; its
// template may change only while it is suspended and has never started, and
// then only its scheduling directives.
func (jobStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	j, o := obj.(*batchv1.Job), old.(*batchv1.Job)
	errs := validateJob(j)
	errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(j, o, field.NewPath("metadata"))...)
	p := field.NewPath("spec")
	s, os := &j.Spec, &o.Spec
	indexed := s.CompletionMode != nil && *s.CompletionMode == batchv1.IndexedCompletion
	if !indexed {
		errs = append(errs, immutable(s.Completions, os.Completions, p.Child("completions"))...)
	} else if !apiequality.Semantic.DeepEqual(s.Completions, os.Completions) && s.Completions != nil &&
		(s.Parallelism == nil || *s.Completions != *s.Parallelism) {
		errs = append(errs, field.Invalid(p.Child("completions"), s.Completions, "can only be modified in tandem with spec.parallelism"))
	}
	errs = append(errs, immutable(s.Selector, os.Selector, p.Child("selector"))...)
	oldTemplate := &os.Template
	suspended := os.Suspend != nil && *os.Suspend && s.Suspend != nil && *s.Suspend
	if suspended && o.Status.StartTime == nil {
		oldTemplate = os.Template.DeepCopy()
		if s.Template.Spec.Affinity != nil && oldTemplate.Spec.Affinity != nil {
			oldTemplate.Spec.Affinity.NodeAffinity = s.Template.Spec.Affinity.NodeAffinity
		}
		oldTemplate.Spec.NodeSelector = s.Template.Spec.NodeSelector
		oldTemplate.Spec.Tolerations = s.Template.Spec.Tolerations
		oldTemplate.Annotations = s.Template.Annotations
		oldTemplate.Labels = s.Template.Labels
		oldTemplate.Spec.SchedulingGates = s.Template.Spec.SchedulingGates
	}
	errs = append(errs, immutable(&s.Template, oldTemplate, p.Child("template"))...)
	errs = append(errs, immutable(s.CompletionMode, os.CompletionMode, p.Child("completionMode"))...)
	errs = append(errs, immutable(s.PodFailurePolicy, os.PodFailurePolicy, p.Child("podFailurePolicy"))...)
	errs = append(errs, immutable(s.BackoffLimitPerIndex, os.BackoffLimitPerIndex, p.Child("backoffLimitPerIndex"))...)
	errs = append(errs, immutable(s.ManagedBy, os.ManagedBy, p.Child("managedBy"))...)
	errs = append(errs, immutable(s.SuccessPolicy, os.SuccessPolicy, p.Child("successPolicy"))...)
	errs = append(errs, immutable(s.PodReplacementPolicy, os.PodReplacementPolicy, p.Child("podReplacementPolicy"))...)
	return errs
}

func (jobStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	j := obj.(*batchv1.Job)
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(j, old.(*batchv1.Job), field.NewPath("metadata"))
	sp := field.NewPath("status")
	for _, f := range []struct {
		name string
		v    int32
	}{{"active", j.Status.Active}, {"succeeded", j.Status.Succeeded}, {"failed", j.Status.Failed}} {
		errs = append(errs, validateNonNegative(int64(f.v), sp.Child(f.name))...)
	}
	if j.Status.Ready != nil {
		errs = append(errs, validateNonNegative(int64(*j.Status.Ready), sp.Child("ready"))...)
	}
	return errs
}

// Fields: Jobs are selectable by status.successful (upstream
// JobToSelectableFields).
func (jobStrategy) Fields(obj runtime.Object) fields.Set {
	j := obj.(*batchv1.Job)
	f := metaFields(j)
	f["status.successful"] = strconv.Itoa(int(j.Status.Succeeded))
	return f
}

// --- cronjobs ---

type cronJobStrategy struct{}

func defaultCronJob(c *batchv1.CronJob) {
	if c.Spec.ConcurrencyPolicy == "" {
		c.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if c.Spec.Suspend == nil {
		f := false
		c.Spec.Suspend = &f
	}
	if c.Spec.SuccessfulJobsHistoryLimit == nil {
		three := int32(3)
		c.Spec.SuccessfulJobsHistoryLimit = &three
	}
	if c.Spec.FailedJobsHistoryLimit == nil {
		one := int32(1)
		c.Spec.FailedJobsHistoryLimit = &one
	}
	DefaultPodSpec(&c.Spec.JobTemplate.Spec.Template.Spec)
}

func (cronJobStrategy) PrepareForCreate(obj runtime.Object) {
	c := obj.(*batchv1.CronJob)
	c.Status = batchv1.CronJobStatus{}
	defaultCronJob(c)
}

func (cronJobStrategy) PrepareForUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Status")
	defaultCronJob(obj.(*batchv1.CronJob))
}

func (cronJobStrategy) PrepareForStatusUpdate(obj, old runtime.Object) {
	CopyField(obj, old, "Spec")
}

var validTimeZoneCharacters = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// validateCronJobSpec is upstream's validateCronJobSpec; old is nil on
// create.
func validateCronJobSpec(s, old *batchv1.CronJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Schedule == "" {
		errs = append(errs, field.Required(p.Child("schedule"), ""))
	} else {
		allowTZ := old != nil && strings.Contains(old.Schedule, "TZ")
		errs = append(errs, validateSchedule(s.Schedule, allowTZ, s.TimeZone, p.Child("schedule"))...)
	}
	if s.StartingDeadlineSeconds != nil {
		errs = append(errs, validateNonNegative(*s.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	if old == nil || !equalJSON(old.TimeZone, s.TimeZone) {
		errs = append(errs, validateTimeZone(s.TimeZone, p.Child("timeZone"))...)
	}
	switch s.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(p.Child("concurrencyPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("concurrencyPolicy"), s.ConcurrencyPolicy,
			[]string{string(batchv1.AllowConcurrent), string(batchv1.ForbidConcurrent), string(batchv1.ReplaceConcurrent)}))
	}
	tp := p.Child("jobTemplate")
	errs = append(errs, validateJobSpecCommon(&s.JobTemplate.Spec, tp.Child("spec"))...)
	if s.JobTemplate.Spec.Selector != nil {
		errs = append(errs, field.Invalid(tp.Child("spec", "selector"), s.JobTemplate.Spec.Selector, "`selector` will be auto-generated"))
	}
	if m := s.JobTemplate.Spec.ManualSelector; m != nil && *m {
		errs = append(errs, field.NotSupported(tp.Child("spec", "manualSelector"), m, []string{"nil", "false"}))
	}
	if l := s.SuccessfulJobsHistoryLimit; l != nil {
		errs = append(errs, validateNonNegative(int64(*l), p.Child("successfulJobsHistoryLimit"))...)
	}
	if l := s.FailedJobsHistoryLimit; l != nil {
		errs = append(errs, validateNonNegative(int64(*l), p.Child("failedJobsHistoryLimit"))...)
	}
	return errs
}

// validateSchedule checks standard five-field cron syntax with robfig/cron,
// the parser the CronJob controller uses.
func validateSchedule(schedule string, allowTZ bool, tz *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := cron.ParseStandard(schedule); err != nil {
		errs = append(errs, field.Invalid(p, schedule, err.Error()))
	}
	switch {
	case allowTZ && strings.Contains(schedule, "TZ") && tz != nil:
		errs = append(errs, field.Invalid(p, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && strings.Contains(schedule, "TZ"):
		errs = append(errs, field.Invalid(p, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

// validateTimeZone accepts IANA zone names, as upstream's does: the zone
// must load. (The browser build embeds time/tzdata for it: a tab has no
// /usr/share/zoneinfo.)
func validateTimeZone(tz *string, p *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(p, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneCharacters.MatchString(part) {
			return field.ErrorList{field.Invalid(p, tz, fmt.Sprintf("unknown time zone %s", *tz))}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, field.Invalid(p, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, field.Invalid(p, tz, err.Error()))
	}
	return errs
}

func validateCronJob(c *batchv1.CronJob, old *batchv1.CronJob) field.ErrorList {
	errs := validateMeta(c, true)
	var os *batchv1.CronJobSpec
	if old != nil {
		os = &old.Spec
	}
	errs = append(errs, validateCronJobSpec(&c.Spec, os, field.NewPath("spec"))...)
	if len(c.Name) > validation.DNS1035LabelMaxLength-11 {
		// Jobs are named <cronjob>-<11 characters>, and a name has 63.
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), c.Name, "must be no more than 52 characters"))
	}
	return errs
}

func (cronJobStrategy) Validate(obj runtime.Object) field.ErrorList {
	return validateCronJob(obj.(*batchv1.CronJob), nil)
}

func (cronJobStrategy) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	c, o := obj.(*batchv1.CronJob), old.(*batchv1.CronJob)
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(c, o, field.NewPath("metadata"))
	errs = append(errs, validateMeta(c, true)...)
	return append(errs, validateCronJobSpec(&c.Spec, &o.Spec, field.NewPath("spec"))...)
}

func (cronJobStrategy) ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return apivalidation.ValidateObjectMetaAccessorUpdate(obj.(*batchv1.CronJob), old.(*batchv1.CronJob), field.NewPath("metadata"))
}

func (cronJobStrategy) Fields(obj runtime.Object) fields.Set {
	return metaFields(obj.(*batchv1.CronJob))
}

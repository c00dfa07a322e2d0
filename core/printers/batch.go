package printers

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Jobs and CronJobs. (Upstream takes the CronJob descriptions from
// batch/v1beta1, whose texts match batch/v1's; batch/v1 is used here so the
// old group stays out of the wasm.)

var jobColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Status", Type: "string", Description: "Status of the job."},
	{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
	{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
	{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
}

var cronJobColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Schedule", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]},
	{Name: "Timezone", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
	{Name: "Suspend", Type: "boolean", Description: batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]},
	{Name: "Active", Type: "integer", Description: batchv1.CronJobStatus{}.SwaggerDoc()["active"]},
	{Name: "Last Schedule", Type: "string", Description: batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
	{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
	{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
	{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
	{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
}

func init() {
	Register(&batchv1.Job{}, jobColumns, printJob)
	Register(&batchv1.CronJob{}, cronJobColumns, printCronJob)
}

// printJob is upstream's printJob (1.32+): STATUS from the conditions,
// COMPLETIONS succeeded/completions, DURATION from start to completion (or
// to now while it runs).
func printJob(obj runtime.Object, now time.Time) ([]any, error) {
	j := obj.(*batchv1.Job)
	var completions string
	if j.Spec.Completions != nil {
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	} else {
		parallelism := int32(0)
		if j.Spec.Parallelism != nil {
			parallelism = *j.Spec.Parallelism
		}
		if parallelism > 1 {
			completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, parallelism)
		} else {
			completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
		}
	}
	var dur string
	switch {
	case j.Status.StartTime == nil:
	case j.Status.CompletionTime == nil:
		dur = HumanDuration(now.Sub(j.Status.StartTime.Time))
	default:
		dur = HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
	}
	status := "Running"
	switch {
	case jobCondition(j, batchv1.JobComplete):
		status = "Complete"
	case jobCondition(j, batchv1.JobFailed):
		status = "Failed"
	case j.DeletionTimestamp != nil:
		status = "Terminating"
	case jobCondition(j, batchv1.JobSuspended):
		status = "Suspended"
	case jobCondition(j, batchv1.JobFailureTarget):
		status = "FailureTarget"
	}
	names, images := containerCells(j.Spec.Template.Spec.Containers)
	return []any{j.Name, status, completions, dur, Age(j.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(j.Spec.Selector)}, nil
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// printCronJob is upstream's printCronJob.
func printCronJob(obj runtime.Object, now time.Time) ([]any, error) {
	c := obj.(*batchv1.CronJob)
	last := "<none>"
	if c.Status.LastScheduleTime != nil {
		last = Age(*c.Status.LastScheduleTime, now)
	}
	tz := "<none>"
	if c.Spec.TimeZone != nil {
		tz = *c.Spec.TimeZone
	}
	names, images := containerCells(c.Spec.JobTemplate.Spec.Template.Spec.Containers)
	return []any{c.Name, c.Spec.Schedule, tz, boolPtr(c.Spec.Suspend), int64(len(c.Status.Active)), last,
		Age(c.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(c.Spec.JobTemplate.Spec.Selector)}, nil
}

// boolPtr is upstream's printBoolPtr: True, False or <unset>.
func boolPtr(b *bool) string {
	switch {
	case b == nil:
		return "<unset>"
	case *b:
		return "True"
	}
	return "False"
}

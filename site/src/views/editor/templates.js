// Starting points for a new file in the editor: the smallest manifest of
// each kind that the API server accepts and that runs here (the images are
// kubetab's built-in WASI images: `images` in the console lists them).

export const templates = {
  Deployment: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: web:1.0
        ports:
        - containerPort: 8080
`,
  Service: `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
    targetPort: 8080
`,
  Pod: `apiVersion: v1
kind: Pod
metadata:
  name: hello
  labels:
    app: hello
spec:
  containers:
  - name: hello
    image: hello:1.0
`,
  Job: `apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: once
        image: job:1.0
`,
  ConfigMap: `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  greeting: hello
  mode: learning
`,
};

/** A file name for a new file of kind that is not in taken: deployment.yaml, deployment-2.yaml ... */
export function newName(kind, taken) {
  const base = kind.toLowerCase();
  let name = `${base}.yaml`;
  for (let i = 2; taken.has(name); i++) name = `${base}-${i}.yaml`;
  return name;
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parser } from '@lezer/yaml';
import { docs, str, fieldRange, splitPath, unknownFields, kindSchema, fieldSchema, openAPIPath, causes, yamlErrorLines, pathAt } from './yamlmap.js';

const web = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replica: 2
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
      - name: hello
        image: "hello:1.0"
        imagePullPolicy: Never
        colour: blue
`;

const lineOf = (text, pos) => text.slice(0, pos).split('\n').length;
const parse = (text) => docs(parser.parse(text), text);

// A small OpenAPI v3 document shaped like the API server's.
const openapi = {
  components: {
    schemas: {
      'io.k8s.api.apps.v1.Deployment': {
        'x-kubernetes-group-version-kind': [{ group: 'apps', version: 'v1', kind: 'Deployment' }],
        properties: {
          apiVersion: { type: 'string' }, kind: { type: 'string' },
          metadata: { allOf: [{ $ref: '#/components/schemas/meta' }] },
          spec: { allOf: [{ $ref: '#/components/schemas/spec' }] },
        },
      },
      meta: { properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } } },
      spec: {
        properties: {
          replicas: { type: 'integer', description: 'Number of desired pods.' },
          selector: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          template: { properties: { metadata: { $ref: '#/components/schemas/meta' }, spec: { $ref: '#/components/schemas/podspec' } } },
        },
      },
      podspec: { properties: { containers: { type: 'array', items: { $ref: '#/components/schemas/container' } } } },
      container: { properties: { name: { type: 'string' }, image: { type: 'string' }, imagePullPolicy: { type: 'string' } } },
    },
  },
};

test('docs reads kind and name; several documents', () => {
  const { docs: d, errors } = parse(web + '---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n');
  assert.equal(errors.length, 0);
  assert.equal(d.length, 2);
  assert.equal(str(d[0].node, 'kind'), 'Deployment');
  assert.equal(str(d[0].node, 'spec', 'template', 'spec', 'containers', 0, 'image'), '');
  assert.equal(str(d[1].node, 'kind'), 'Service');
});

test('splitPath', () => {
  assert.deepEqual(splitPath('spec.template.spec.containers[0].image'), ['spec', 'template', 'spec', 'containers', 0, 'image']);
  assert.deepEqual(splitPath('metadata.labels[app]'), ['metadata', 'labels', 'app']);
});

test('fieldRange finds the key of a cause', () => {
  const { docs: d } = parse(web);
  for (const [path, line, exact] of [['spec.replicas', 8, true], ['spec.template.spec.containers[0].image', 19, true], ['spec.template.spec.containers[0].ports', 18, false], ['metadata.labels[app]', 5, true]]) {
    const r = fieldRange(d[0].node, path);
    assert.ok(r, path);
    assert.equal(lineOf(web, r.from), line, path);
    assert.equal(r.exact, exact, path);
  }
  assert.equal(fieldRange(d[0].node, 'status.replicas'), null);
});

test('unknownFields flags what the schema does not have, on its line', () => {
  const { docs: d } = parse(web);
  const s = kindSchema(openapi, 'apps/v1', 'Deployment');
  assert.ok(s);
  const u = unknownFields(openapi, s, d[0].node);
  assert.deepEqual(u.map((x) => [x.path, lineOf(web, x.from)]), [['spec.replica', 7], ['spec.template.spec.containers[0].colour', 21]]);
  assert.equal(kindSchema(openapi, 'apps/v1', 'StatefulSet'), null);
  assert.equal(fieldSchema(openapi, s, ['spec', 'replicas']).description, 'Number of desired pods.');
  assert.equal(fieldSchema(openapi, s, ['spec', 'nope']), null);
});

test('openAPIPath', () => {
  assert.equal(openAPIPath('v1'), '/openapi/v3/api/v1');
  assert.equal(openAPIPath('apps/v1'), '/openapi/v3/apis/apps/v1');
});

test('syntax errors are found', () => {
  const bad = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: [x\n';
  assert.ok(parse(bad).errors.length > 0);
});

test('causes from kubectl output and from kubectl edit header', () => {
  assert.deepEqual(causes('The Deployment "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'),
    [{ path: 'spec.replicas', message: 'Invalid value: -1: must be greater than or equal to 0' }]);
  assert.deepEqual(causes('The Deployment "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.spec.containers[0].image: Required value]').map((c) => c.path),
    ['spec.replicas', 'spec.template.spec.containers[0].image']);
  assert.deepEqual(causes('# deployments.apps "web" was not valid:\n# * spec.replicas: Invalid value: -1: must be greater than or equal to 0\n#\n').map((c) => c.path), ['spec.replicas']);
  assert.deepEqual(causes('Error from server (BadRequest): error when creating "web.yaml": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replica"'),
    [{ path: 'spec.replica', message: 'unknown field "spec.replica"' }]);
  assert.deepEqual(yamlErrorLines('error: error parsing web.yaml: error converting YAML to JSON: yaml: line 7: mapping values are not allowed in this context'),
    [{ line: 7, message: 'yaml: line 7: mapping values are not allowed in this context' }]);
});

test('pathAt: the field under the cursor', () => {
  const { docs: d } = parse(web);
  const at = web.indexOf('imagePullPolicy') + 3;
  assert.deepEqual(pathAt(d[0].node, at).parts, ['spec', 'template', 'spec', 'containers', 0, 'imagePullPolicy']);
  assert.equal(pathAt(d[0].node, at).inKey, true);
});

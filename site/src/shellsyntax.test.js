// node --test: when console input is complete (the continuation prompt and
// the player's grouping of run lines).
import test from 'node:test';
import assert from 'node:assert/strict';
import { isComplete, groupCommands } from './shellsyntax.js';

test('isComplete', () => {
  const cases = [
    ['kubectl get pods', true],
    ['', true],
    ['kubectl get pods \\', false],
    ['kubectl get pods \\\n  -o wide', true],
    ['echo "one', false],
    ['echo "one\ntwo"', true],
    ["echo 'it''s'", true],
    ["echo 'open", false],
    ['echo "a \\" b"', true],
    ['echo "a \\"', false],
    ['cat <<EOF > f.yaml', false],
    ['cat <<EOF > f.yaml\nkind: Pod', false],
    ['cat <<EOF > f.yaml\nkind: Pod\nEOF', true],
    ['cat <<EOF > f.yaml\nkind: Pod\n EOF', false],              // the delimiter alone on its line
    ['cat <<-EOF > f.yaml\n\tkind: Pod\n\tEOF', true],           // <<- strips tabs
    ["cat <<'END'\n$HOME \"\nEND", true],                       // quotes in a body are text
    ['cat <<"X" | kubectl apply -f -\na: 1\nX', true],
    ['echo "<<EOF"', true],                                      // quoted: not a here-document
    ['kubectl get pods # a comment "', true],
    ['echo a#b "', false],                                       // # inside a word is not a comment
    ['cat <<A <<B\na\nA\nb', false],
    ['cat <<A <<B\na\nA\nb\nB', true],
    ['echo 1 <<< x', true],                                      // a here-string, not a document
    ['kubectl get pods |', false],
    ['kubectl get pods | \n grep web', true],
    ['true &&', false],
    ['false ||', false],
    ['false || # why', false],
    ['echo "a |"', true],
    ['echo a \\|', true],                                       // an escaped |
    ['echo a &', true],                                          // in the background
    ['echo # it\'s a comment', true],
  ];
  for (const [text, want] of cases) assert.equal(isComplete(text), want, JSON.stringify(text));
});

test('groupCommands', () => {
  assert.deepEqual(groupCommands(['kubectl get nodes', '', 'cat <<EOF > a.yaml', 'kind: Pod', 'EOF', 'kubectl apply -f a.yaml']),
    ['kubectl get nodes', 'cat <<EOF > a.yaml\nkind: Pod\nEOF', 'kubectl apply -f a.yaml']);
  assert.deepEqual(groupCommands(['kubectl get \\', '  pods']), ['kubectl get \\\n  pods']);
  assert.deepEqual(groupCommands(['echo "open']), ['echo "open']);
});

// Kubernetes objects as one multi-document YAML stream, as `kubectl apply -f` reads it.
import { stringify } from 'yaml';

export function toYamlStream(objects: readonly object[], header?: string): string {
  const docs = objects.map((o) => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false }));
  const comment = header ? header.split('\n').map((line) => (line ? `# ${line}` : '#')).join('\n') + '\n' : '';
  return comment + docs.map((d) => `---\n${d}`).join('');
}

// `deed completion bash|zsh|fish`: a shell completion script, generated from the command
// tree itself (commander's Help: visible commands and options, their value choices), so a
// new command or flag completes without anyone keeping a list. Static: completing runs no
// node process, only the shell.
import { Argument, type Command, type Help, type Option } from 'commander';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  /** Subcommand names from the root, e.g. ['keys', 'usage']. */
  path: string[];
  description: string;
  commands: Node[];
  /** The values its first argument takes, when they are a fixed list (deed completion's shells). */
  values: readonly string[];
  options: Array<{ flags: string[]; takesValue: boolean; choices: readonly string[] | undefined; description: string }>;
}

function tree(cmd: Command, help: Help, path: string[] = []): Node {
  return {
    path,
    description: cmd.description(),
    commands: help.visibleCommands(cmd).filter((c) => c.name() !== 'help').map((c) => tree(c, help, [...path, c.name()])),
    values: cmd.registeredArguments[0]?.argChoices ?? [],
    options: help.visibleOptions(cmd).map((o: Option) => ({
      flags: [o.short, o.long].filter((f): f is string => f !== undefined),
      takesValue: o.required || o.optional,
      choices: o.argChoices,
      description: o.description,
    })),
  };
}

function walk(node: Node): Node[] {
  return [node, ...node.commands.flatMap(walk)];
}

const bashWord = (path: string[]) => path.join('/');

function bash(root: Node, name: string, fn: string): string {
  const nodes = walk(root);
  const transitions = nodes.flatMap((n) => n.commands.map((c) => `${bashWord(n.path)}/${c.path.at(-1)}`));
  const lines = [
    `# ${name} completion for bash: source <(${name} completion bash)`,
    `${fn}() {`,
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path="" i w commands="" options=""',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    w="${COMP_WORDS[i]}"',
    '    case "$path/$w" in',
    `      ${transitions.map((t) => JSON.stringify(t)).join('|')}) path="\${path:+$path/}$w" ;;`,
    '    esac',
    '  done',
    '  case "$path" in',
    ...nodes.map(
      (n) =>
        `    ${JSON.stringify(bashWord(n.path))}) commands=${JSON.stringify([...n.commands.map((c) => c.path.at(-1)), ...n.values].join(' '))}; options=${JSON.stringify(n.options.flatMap((o) => o.flags).join(' '))} ;;`,
    ),
    '  esac',
    '  case "$path $prev" in',
    ...nodes.flatMap((n) =>
      n.options
        .filter((o) => o.takesValue)
        .map((o) => {
          const cases = o.flags.map((f) => JSON.stringify(`${bashWord(n.path)} ${f}`)).join('|');
          const reply = o.choices ? `compgen -W ${JSON.stringify(o.choices.join(' '))} -- "$cur"` : 'compgen -f -- "$cur"';
          return `    ${cases}) COMPREPLY=($(${reply})); return ;;`;
        }),
    ),
    '  esac',
    '  if [[ "$cur" == -* ]]; then',
    '    COMPREPLY=($(compgen -W "$options" -- "$cur"))',
    '  elif [[ -n "$commands" ]]; then',
    '    COMPREPLY=($(compgen -W "$commands" -- "$cur"))',
    '  else',
    '    COMPREPLY=($(compgen -f -- "$cur"))',
    '  fi',
    '}',
    `complete -F ${fn} ${name} kubectl-${name}`,
    '',
  ];
  return lines.join('\n');
}

function zsh(root: Node, name: string, fn: string): string {
  // zsh runs the bash function through its bash-completion layer: one generated script for both.
  return [
    `#compdef ${name} kubectl-${name}`,
    `# ${name} completion for zsh: source <(${name} completion zsh)`,
    'autoload -U +X bashcompinit && bashcompinit',
    bash(root, name, fn).split('\n').slice(1).join('\n'),
  ].join('\n');
}

const fishQuote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\s+/g, ' ')}'`;

function fish(root: Node, name: string): string {
  const lines = [`# ${name} completion for fish: ${name} completion fish | source`, `complete -c ${name} -f`];
  // Where a command's words apply: its path seen, and none of its subcommands yet.
  const condition = (n: Node) => {
    const seen = n.path.map((p) => `__fish_seen_subcommand_from ${p}`);
    const notYet = n.commands.length > 0 ? [`not __fish_seen_subcommand_from ${n.commands.map((c) => c.path.at(-1)).join(' ')}`] : [];
    const terms = n.path.length === 0 && n.commands.length > 0 ? ['__fish_use_subcommand'] : [...seen, ...notYet];
    return terms.length > 0 ? ` -n ${fishQuote(terms.join('; and '))}` : '';
  };
  for (const n of walk(root)) {
    const where = condition(n);
    for (const c of n.commands) lines.push(`complete -c ${name}${where} -a ${c.path.at(-1)} -d ${fishQuote(c.description)}`);
    if (n.values.length > 0) lines.push(`complete -c ${name}${where} -a ${fishQuote(n.values.join(' '))}`);
    for (const o of n.options) {
      const flags = o.flags.map((f) => (f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`)).join(' ');
      const value = !o.takesValue ? '' : o.choices ? ` -x -a ${fishQuote(o.choices.join(' '))}` : ' -r -F';
      lines.push(`complete -c ${name}${where} ${flags}${value} -d ${fishQuote(o.description)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The completion script for `shell`, of the program's command tree as its help shows it. */
export function completionScript(program: Command, shell: Shell): string {
  const root = tree(program, program.createHelp());
  const name = program.name().replace(/^kubectl /, '');
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, '_')}_completion`;
  return shell === 'bash' ? bash(root, name, fn) : shell === 'zsh' ? zsh(root, name, fn) : fish(root, name);
}

export function registerCompletion(program: Command, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  program
    .command('completion')
    .description('Print a shell completion script (bash: source <(deed completion bash); zsh: the same; fish: deed completion fish | source)')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: Shell) => write(completionScript(program, shell)));
}

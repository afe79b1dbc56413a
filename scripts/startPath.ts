// The path of one start (docs/architecture.md, "Launch by decision"): follows, with the TypeScript
// checker, the calls the coordinator makes to start one attempt of one task, and counts
//   stops  — distinct project functions reached (named functions, methods, constructors, and
//            interface members called through an injected part), outside the store's internals;
//   files  — the files those stops live in;
//   climbs — calls from a lower tier back up into a higher one: a function literal handed to a
//            function of a lower tier (the store, a query, a use case), which calls it back.
// The walk enters the executor's functions (the coordinator's own code for a start) and stops at
// everything else: a use case, an operation, a query, an effect, a domain function is one stop
// each (`--enter executor,usecases` enters the use cases too). It does not follow the hand-over:
// the AttemptSupervisor's and WorkerLeaseKeeper's methods are stops, their insides are the
// supervision's path, not the start's.
//
//   node --import tsx scripts/startPath.ts [--root <checkout>] [--enter <tiers>] [--list] [<file>#<name> ...]
//
// With no entries it measures this tree's start: the entries of today's launcher.
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const DEFAULT_ENTRIES = [
  'src/engine/executor/attemptLauncher.ts#AttemptLauncher.launch',
  'src/engine/queries/launchSnapshot.ts#readLaunchSnapshot',
];

/** Tiers from the bottom (docs/architecture.md, "Layers and tiers"); a call from a lower one to a higher one climbs. */
const TIERS: Array<[string, number]> = [
  ['src/engine/domain/', 0],
  ['src/engine/store/', 1],
  ['src/engine/queries/', 2],
  ['src/engine/operations/', 3],
  ['src/engine/effects/', 3],
  ['src/engine/usecases/', 4],
  ['src/engine/executor/', 5],
  ['src/engine/', 6],
];
/** The tiers whose functions the walk enters (`--enter executor,usecases` enters the use cases too). */
let ENTERED = ['src/engine/executor/'];
const HAND_OVER = ['AttemptSupervisor', 'WorkerLeaseKeeper'];

interface Options {
  root: string;
  list: boolean;
  entries: string[];
}

function parseArgs(argv: string[]): Options {
  const options: Options = { root: resolve(__dirname, '..'), list: false, entries: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--root') options.root = resolve(argv[++i]!);
    else if (argv[i] === '--list') options.list = true;
    else if (argv[i] === '--enter') ENTERED = argv[++i]!.split(',').map((tier) => `src/engine/${tier}/`);
    else options.entries.push(argv[i]!);
  }
  if (options.entries.length === 0) options.entries = DEFAULT_ENTRIES;
  return options;
}

export interface StartPath {
  stops: string[];
  files: string[];
  climbs: string[];
}

export function measureStartPath(root: string, entries: readonly string[]): StartPath {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const program = ts.createProgram({
    rootNames: config.fileNames.filter((f) => f.includes('/src/')),
    options: config.options,
  });
  const checker = program.getTypeChecker();
  const rel = (node: ts.Node): string => relative(root, node.getSourceFile().fileName);
  const tierOf = (file: string): number => TIERS.find(([prefix]) => file.startsWith(prefix))?.[1] ?? 7;
  const inProject = (node: ts.Node): boolean => {
    const file = rel(node);
    return file.startsWith('src/') && !file.startsWith('src/engine/store/');
  };
  const nameOf = (node: ts.Node): string => {
    const own = (node as { name?: ts.Node }).name?.getText() ?? '(anonymous)';
    const owner = ts.findAncestor(node.parent, (n) => ts.isClassLike(n) || ts.isInterfaceDeclaration(n)) as
      ts.ClassLikeDeclaration | ts.InterfaceDeclaration | undefined;
    const label = ts.isConstructorDeclaration(node) ? 'constructor' : own;
    return owner?.name ? `${owner.name.getText()}.${label}` : label;
  };
  const key = (node: ts.Node): string => `${rel(node)}#${nameOf(node)}`;

  const stops = new Map<string, ts.Node>();
  const climbs: string[] = [];
  const entered = new Set<ts.Node>();

  const declarationOf = (call: ts.CallExpression | ts.NewExpression): ts.Node | undefined => {
    const signature = checker.getResolvedSignature(call);
    let declaration: ts.Node | undefined = signature?.getDeclaration();
    if (!declaration || ts.isJSDocSignature(declaration)) {
      let symbol = checker.getSymbolAtLocation(call.expression);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      declaration = symbol?.valueDeclaration ?? symbol?.declarations?.[0];
    }
    // `new X()` of a class without a constructor of its own: the class is the stop.
    return declaration;
  };
  const functionOf = (declaration: ts.Node): ts.Node => {
    if (ts.isVariableDeclaration(declaration) && declaration.initializer) return declaration.initializer;
    if (ts.isPropertyDeclaration(declaration) && declaration.initializer) return declaration.initializer;
    return declaration;
  };
  const isHandOver = (node: ts.Node): boolean => HAND_OVER.some((owner) => nameOf(node).startsWith(`${owner}.`));

  const reach = (declaration: ts.Node): void => {
    if (!inProject(declaration)) return;
    const k = key(declaration);
    if (!stops.has(k)) stops.set(k, declaration);
    const target = functionOf(declaration);
    if (entered.has(target) || isHandOver(declaration)) return;
    if (!ENTERED.some((prefix) => rel(target).startsWith(prefix))) return;
    const body = (target as ts.FunctionLikeDeclaration).body;
    if (!body) return;
    entered.add(target);
    walkBody(body, tierOf(rel(target)), nameOf(declaration));
  };

  function walkBody(body: ts.Node, tier: number, where: string): void {
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const declaration = declarationOf(node);
        if (declaration) {
          const calleeFile = rel(declaration);
          const calleeTier = calleeFile.startsWith('src/') ? tierOf(calleeFile) : undefined;
          for (const argument of node.arguments ?? []) {
            if ((ts.isArrowFunction(argument) || ts.isFunctionExpression(argument)) && calleeTier !== undefined)
              if (calleeTier < tier) climbs.push(`${where} → ${calleeFile}#${nameOf(declaration)} → back`);
          }
          reach(declaration);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(body);
  }

  for (const entry of entries) {
    const [file, name] = entry.split('#') as [string, string];
    const source = program.getSourceFile(join(root, file));
    if (!source) throw new Error(`no ${file} under ${root}`);
    let found: ts.Node | undefined;
    const find = (node: ts.Node): void => {
      if (found) return;
      if ((ts.isFunctionLike(node) || ts.isVariableDeclaration(node)) && nameOf(node) === name) found = node;
      else ts.forEachChild(node, find);
    };
    find(source);
    if (!found) throw new Error(`no ${name} in ${file}`);
    reach(found);
  }
  const stopList = [...stops.keys()].sort();
  return {
    stops: stopList,
    files: [...new Set(stopList.map((k) => k.split('#')[0]!))].sort(),
    climbs,
  };
}

if (require.main === module) {
  const options = parseArgs(process.argv.slice(2));
  const path = measureStartPath(options.root, options.entries);
  if (options.list) {
    for (const stop of path.stops) process.stdout.write(`stop  ${stop}\n`);
    for (const climb of path.climbs) process.stdout.write(`climb ${climb}\n`);
  }
  process.stdout.write(
    `${relative(dirname(options.root), options.root) || options.root}: ${path.stops.length} stops in ${path.files.length} files, ${path.climbs.length} climbs\n`,
  );
}

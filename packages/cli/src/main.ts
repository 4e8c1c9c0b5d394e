import { Command, CommanderError, Option } from 'commander';
import { SDK_VERSION } from '@vision/sdk';
import { detectCommand } from './commands/detect';
import { quotaCommand, scenesCommand } from './commands/info';
import { analyticsCommand, eventsCommand, rulesCommand } from './commands/places';
import { resultsCommand } from './commands/results';
import { taskCommand, tasksCommand } from './commands/tasks';
import { webhooksCommand } from './commands/webhooks';
import { EXIT, EXIT_HELP, describeFailure } from './exit-codes';

/** The `vision` program; every command and sub-command answers --help. */
export function program(): Command {
  const root = new Command('vision')
    .description('Command line of the Vision Recognition Service')
    .version(SDK_VERSION)
    .addOption(new Option('--base-url <url>', 'service address').env('VISION_BASE_URL'))
    .addOption(
      new Option('--api-key <key>', 'API key (prefer the environment variable)').env('VISION_API_KEY'),
    )
    .addHelpText('after', `\n${EXIT_HELP}`)
    .showHelpAfterError('(add --help for usage)');
  for (const cmd of [
    scenesCommand(),
    detectCommand(),
    taskCommand(),
    tasksCommand(),
    resultsCommand(),
    rulesCommand(),
    analyticsCommand(),
    eventsCommand(),
    quotaCommand(),
    webhooksCommand(),
  ])
    root.addCommand(cmd);
  const strict = (cmd: Command) => {
    cmd.exitOverride();
    cmd.commands.forEach(strict);
  };
  strict(root);
  return root;
}

/** Runs `vision` with these arguments and exits with the status of EXIT. */
export async function main(argv: string[]): Promise<void> {
  // A closed pipe (`vision results ID | head`) ends the command quietly.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.ok);
  });
  try {
    await program().parseAsync(argv, { from: 'user' });
    process.exitCode = EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version print and end with 0; commander has already printed its usage errors.
      process.exitCode =
        err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0
          ? EXIT.ok
          : EXIT.usage;
      return;
    }
    const { code, message } = describeFailure(err);
    process.stderr.write(`vision: ${message}\n`);
    process.exitCode = code;
  }
}

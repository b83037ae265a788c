/**
 * The `trawl` command line. Each command group lives in its own file and
 * registers itself here; this file only wires them up and turns errors
 * into messages and exit codes (from the error registry).
 */

import { Command, CommanderError } from 'commander';
import { ERROR_CODES, isTrawlError } from '../core/errors.ts';
import { VERSION } from '../core/version.ts';
import { maskText } from '../config/secrets.ts';
import { registerConfigCommands } from './config-commands.ts';
import { registerCodesCommand } from './codes-command.ts';
import { registerCrawlCommand } from './crawl-command.ts';
import { registerUrltestCommand } from './urltest-command.ts';
import { registerInspectCommands } from './inspect-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerAdminCommand } from './admin-command.ts';
import { processIo, type Io } from './io.ts';

export function buildProgram(io: Io, setExit: (code: number) => void): Command {
  const program = new Command('trawl')
    .description('trawl: a persistent, polite web crawler service (MS-FSCCFG collections, MS-FSCADM control)')
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.trimEnd()),
      writeErr: (s) => io.err(s.trimEnd()),
    });
  registerCrawlCommand(program, io, setExit);
  registerUrltestCommand(program, io, setExit);
  registerInspectCommands(program, io, setExit);
  registerServeCommand(program, io, setExit);
  registerAdminCommand(program, io, setExit);
  registerConfigCommands(program, io, setExit);
  registerCodesCommand(program, io, setExit);
  for (const cmd of program.commands) cmd.exitOverride();
  return program;
}

/** Runs the CLI; resolves to the exit status. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  let exit = 0;
  const program = buildProgram(io, (code) => {
    exit = code;
  });
  try {
    await program.parseAsync(argv);
    return exit;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return err.exitCode === 0 ? 0 : ERROR_CODES.TRAWL_ERR_USAGE.exitCode;
    }
    if (isTrawlError(err)) {
      // A message may quote a URL or header a user wrote: masked like every printed value.
      io.err(`trawl: ${maskText(err.describe())}`);
      return err.exitCode;
    }
    io.err(`trawl: TRAWL_ERR_INTERNAL: ${maskText((err as Error).stack ?? String(err))}`);
    return ERROR_CODES.TRAWL_ERR_INTERNAL.exitCode;
  }
}

if (import.meta.main) {
  // A reader that went away (`trawl crawl --help | head -1`) is an EPIPE on
  // standard output: what is left to print has nowhere to go, which is no
  // error of trawl's. Without a listener Node throws it as an unhandled event.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  process.exitCode = await main(process.argv);
}

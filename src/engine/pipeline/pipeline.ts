/**
 * The page pipeline: every fetched page goes through the same stages, in
 * order, until one ends it with its outcome; the outcome writer then turns
 * that outcome into the record, the links queued, the feed operations and
 * the counters, in one transaction.
 *
 *   PageContext ─► classify ─► mime ─► sitemap ─► channel ─► type-filters ─► (render) ─► extract
 *                 ─► links ─► directives ─► focus ─► duplicate ─► store
 *                      │ any stage may end the page with a PageOutcome
 *                      ▼
 *                 OutcomeWriter.write ─► crawl store (complete)
 *
 * Stages are long-lived objects, made once per cycle; a stage returns a
 * promise only when it waits for I/O. The render stage is there only when
 * the collection or a sub-collection sets use_javascript. The store stage ends every page that
 * reaches it. Whatever happens, the checksum a page claimed is released
 * once it is written (or failed).
 */

import type { CycleEnv } from '../cycle-env.ts';
import { OutcomeWriter } from '../outcome-writer.ts';
import { ChannelStage } from './channel.ts';
import { ClassifyStage } from './classify.ts';
import { DirectivesStage } from './directives.ts';
import { DuplicateStage } from './duplicate.ts';
import { ExtractStage } from './extract.ts';
import { FocusStage } from './focus.ts';
import { PurgeStage } from './purge.ts';
import { LinksStage } from './links.ts';
import type { PageContext, PageOutcome, PageStage } from './page-context.ts';
import type { Rendering } from '../rendering.ts';
import { RenderStage } from './render.ts';
import { SitemapStage } from './sitemap.ts';
import { StoreStage } from './store.ts';
import { MimeStage, TypeFilterStage } from './type-filters.ts';

export class PagePipeline {
  private readonly env: CycleEnv;
  readonly stages: readonly PageStage[];
  readonly writer: OutcomeWriter;

  constructor(env: CycleEnv, stages: readonly PageStage[], writer: OutcomeWriter) {
    this.env = env;
    this.stages = stages;
    this.writer = writer;
  }

  /** The crawler's stages, in order; `rendering` when some collection or sub-collection sets use_javascript. */
  static standard(env: CycleEnv, rendering?: Rendering): PagePipeline {
    const writer = new OutcomeWriter(env);
    const classify = new ClassifyStage(env);
    return new PagePipeline(env, [
      // trawl_purge: the purge stage decides the purge phase's URIs and hands the others to classify.
      env.purges ? new PurgeStage(env, classify) : classify,
      new MimeStage(),
      new SitemapStage(env),
      new ChannelStage(env, writer),
      new TypeFilterStage(env),
      ...(rendering ? [new RenderStage(env, rendering)] : []),
      new ExtractStage(env),
      new LinksStage(env),
      new DirectivesStage(env),
      new FocusStage(env),
      new DuplicateStage(env),
      new StoreStage(env),
    ], writer);
  }

  /**
   * Runs the page through the stages and writes its outcome. Runs
   * synchronously up to the first stage that waits: classify's decisions
   * about the site are made by the time this returns its promise.
   */
  async run(ctx: PageContext): Promise<void> {
    try {
      const stages = this.stages;
      let outcome: PageOutcome | undefined;
      for (let i = 0; i < stages.length && outcome === undefined; i++) {
        const r = stages[i]!.run(ctx);
        outcome = r instanceof Promise ? await r : r;
      }
      if (outcome === undefined) throw new Error(`page pipeline: no stage ended ${ctx.uri.url}`);
      await this.writer.write(ctx, outcome);
    } finally {
      if (ctx.claim !== undefined) this.env.duplicates.release(ctx.checksum!, ctx.claim);
    }
  }

  /** Writes an outcome decided before any request (robots.txt, the scope, an address rule). */
  write(ctx: PageContext, outcome: PageOutcome): Promise<void> {
    return this.writer.write(ctx, outcome);
  }
}

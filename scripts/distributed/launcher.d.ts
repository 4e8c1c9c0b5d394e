/** Types of scripts/distributed/launcher.js (a plain CommonJS module so that the CLI runs without a build step). */
import type { ChildProcess } from 'node:child_process';

export type ServiceName = 'gateway' | 'tasks' | 'quota' | 'results' | 'images' | 'inference';
export type Link = 'postgres' | 'redis' | 'kafka' | 's3' | 'inference';
export type StackServer = 'postgres' | 'redis' | 'kafka' | 's3' | 'toxiproxy' | 'jaeger' | 'prometheus';

export interface DeploymentOptions {
  id?: string;
  keys?: string;
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  replicas?: Partial<Record<'gateway' | 'results' | 'images', number>>;
  toxiproxy?: boolean;
  logDir?: string;
  logLevel?: string;
}

export interface ServiceProcess {
  name: ServiceName;
  index: number;
  port: number;
  url: string;
  /** Its GET /metrics (METRICS_PORT), scraped by the stack's Prometheus. */
  metricsPort: number;
  metricsUrl: string;
  child?: ChildProcess;
  exited?: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface Toxic {
  name?: string;
  type: 'latency' | 'bandwidth' | 'slow_close' | 'timeout' | 'reset_peer' | 'slicer' | 'limit_data';
  stream?: 'upstream' | 'downstream';
  toxicity?: number;
  attributes: Record<string, number>;
}

export class Toxiproxy {
  constructor(url: string);
  create(name: string, listen: string, upstream: string): Promise<string>;
  remove(name: string): Promise<unknown>;
  setEnabled(name: string, enabled: boolean): Promise<unknown>;
  addToxic(name: string, toxic: Toxic): Promise<unknown>;
  removeToxic(name: string, toxicName: string): Promise<unknown>;
  removeAllToxics(name: string): Promise<void>;
}

export interface StackEnv {
  pgUrl: string;
  redisUrl: string;
  kafkaBrokers: string;
  kafkaProxiedUpstream: string;
  kafkaProxiedListen: string;
  s3Endpoint: string;
  s3AccessKey: string;
  s3SecretKey: string;
  toxiproxyUrl: string;
  /** Set when scripts/stack started Jaeger and Prometheus. */
  otlpEndpoint?: string;
  jaegerUrl?: string;
  prometheusUrl?: string;
  prometheusTargets?: string;
}

export class Deployment {
  constructor(options?: DeploymentOptions);
  readonly id: string;
  readonly database: string;
  readonly bucket: string;
  readonly logDir: string;
  readonly dataDir: string;
  readonly secret: string;
  readonly stack: StackEnv;
  readonly toxiproxy: Toxiproxy;
  /** link -> toxiproxy proxy name (only with options.toxiproxy). */
  readonly proxies: Partial<Record<Link, string>>;
  /** The environment the services were started with (secrets included: never print it). */
  env: Record<string, string | undefined>;
  procs: Record<ServiceName, ServiceProcess[]>;
  readonly url: string;
  start(): Promise<this>;
  urls(name: ServiceName): string[];
  proc(name: ServiceName, index?: number): ServiceProcess;
  tail(label: string, lines?: number): string;
  kill(
    name: ServiceName,
    opts?: { signal?: NodeJS.Signals; index?: number; timeoutMs?: number },
  ): Promise<void>;
  restart(name: ServiceName, opts?: { index?: number; waitReady?: boolean }): Promise<void>;
  spawnService(p: ServiceProcess, opts?: { waitReady?: boolean }): Promise<ServiceProcess>;
  waitReady(p: ServiceProcess, timeoutMs?: number): Promise<void>;
  close(opts?: { keepData?: boolean }): Promise<void>;
}

export function readStackEnv(): StackEnv;
/** Runs scripts/stack/<script> with arguments (e.g. stackScript('stop.sh', ['kafka'])). */
export function stackScript(script: string, args?: string[]): Promise<string>;
export const SERVICES: ServiceName[];
export const TOPICS: string[];
export const STACK_DIR: string;

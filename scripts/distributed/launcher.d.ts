/** Types of scripts/distributed/launcher.js (a plain CommonJS module so that the CLI runs without a build step). */
import type { ChildProcess } from 'node:child_process';

export type Runtime = 'process' | 'container';

export type ServiceName = 'gateway' | 'tasks' | 'quota' | 'results' | 'images' | 'inference';
export type Link = 'postgres' | 'redis' | 'kafka' | 's3' | 'inference';
export type StackServer = 'postgres' | 'redis' | 'kafka' | 's3' | 'toxiproxy' | 'jaeger' | 'prometheus';

export interface DeploymentOptions {
  id?: string;
  keys?: string;
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  replicas?: Partial<Record<'gateway' | 'results' | 'images' | 'inference', number>>;
  toxiproxy?: boolean;
  logDir?: string;
  logLevel?: string;
  /** 'process' (default: VISION_DEPLOYMENT_RUNTIME, else process) or 'container' (podman, the service image). */
  runtime?: Runtime;
  /** The service image in container mode (default VISION_IMAGE, else localhost/vision:dev). */
  image?: string;
}

/**
 * What is known of a replica's main process: the child process in process mode; in container mode the
 * container's main process as the host sees it (pid outside the container, exit code once it ended).
 */
export type ServiceChild =
  | ChildProcess
  | { pid: number; exitCode: number | null; signalCode: NodeJS.Signals | null; restarts: number };

/** A subset of `podman inspect` of a replica's container. */
export interface ContainerInfo {
  Name: string;
  ImageName: string;
  RestartCount: number;
  State: { Status: string; Running: boolean; Pid: number; ExitCode: number };
  Config: { User: string; Cmd: string[] | null; Env: string[] };
  HostConfig: {
    ReadonlyRootfs: boolean;
    NetworkMode: string;
    RestartPolicy: { Name: string; MaximumRetryCount: number };
  };
  Mounts: { Type: string; Source: string; Destination: string; RW: boolean }[];
}

/** The container runtime (scripts/distributed/container-runtime.js), present in container mode. */
export interface ContainerRuntime {
  readonly image: string;
  /** The container name of a replica's label (`<deployment id>-<label>`). */
  name(label: string): string;
  inspect(p: ServiceProcess): Promise<ContainerInfo>;
}

export interface ServiceProcess {
  name: ServiceName;
  index: number;
  port: number;
  url: string;
  /** Its GET /metrics (METRICS_PORT), scraped by the stack's Prometheus. */
  metricsPort: number;
  metricsUrl: string;
  child?: ServiceChild;
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
  /** The broker's super user (provisioning, tests that inspect the broker); absent for a broker without SASL. */
  kafkaSasl?: { mechanism: 'scram-sha-512'; username: string; password: string };
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
  /** The same servers as a test cluster's pods reach them, set while they listen for them (test/cluster). */
  pod?: {
    pgUrl: string;
    redisUrl: string;
    kafkaBrokers: string;
    s3Endpoint: string;
    /** Jaeger's OTLP/HTTP receiver on the pod address, while the stack runs Jaeger. */
    otlpEndpoint?: string;
  };
}

export class Deployment {
  constructor(options?: DeploymentOptions);
  readonly id: string;
  readonly database: string;
  readonly bucket: string;
  readonly logDir: string;
  readonly dataDir: string;
  readonly secret: string;
  /** Each service's identity directory (its own key, its callers' public keys). */
  readonly identityDirs: Record<ServiceName, string>;
  readonly stack: StackEnv;
  readonly toxiproxy: Toxiproxy;
  /** link -> toxiproxy proxy name (only with options.toxiproxy). */
  readonly proxies: Partial<Record<Link, string>>;
  readonly runtime: Runtime;
  /** Set in container mode. */
  readonly containers?: ContainerRuntime;
  /** The environment the services were started with (secrets included: never print it). */
  env: Record<string, string | undefined>;
  procs: Record<ServiceName, ServiceProcess[]>;
  readonly url: string;
  start(): Promise<this>;
  /**
   * The database URL of a service's own login (it reaches its own schema only), or of the owner login that ran the
   * migrations ('owner'), through the Postgres link (scripts/distributed/db-logins.js). Secret: never print it.
   */
  databaseUrl(who: ServiceName | 'owner'): string;
  /**
   * Each bus service's own Kafka principal (SCRAM-SHA-512, its ACLs from BUS_GRANTS; scripts/distributed/bus-logins.js),
   * set once started. Secret: never print it.
   */
  busLogins?: Record<Exclude<ServiceName, 'gateway'>, { user: string; password: string }>;
  urls(name: ServiceName): string[];
  proc(name: ServiceName, index?: number): ServiceProcess;
  tail(label: string, lines?: number): string;
  /** A replica's label: its service name, with `-<n>` from the second replica on (its log and container name). */
  label(p: ServiceProcess): string;
  kill(
    name: ServiceName,
    opts?: { signal?: NodeJS.Signals; index?: number; timeoutMs?: number },
  ): Promise<void>;
  restart(name: ServiceName, opts?: { index?: number; waitReady?: boolean }): Promise<void>;
  /**
   * Container mode only: SIGKILL of a replica's main process from the host (a crash); podman's restart policy starts
   * it again, and it is awaited ready on the same port.
   */
  crash(
    name: ServiceName,
    opts?: { index?: number },
  ): Promise<{ before: { pid: number; restarts: number }; after: { pid: number; restarts: number } }>;
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

/**
 * An ActiveMQ broker of a test's own, from Debian's `activemq` package, and a
 * Java JMS client compiled against Debian's client jars.
 *
 *   startBroker()  BASE/conf/activemq.xml: OpenWire and STOMP bound to one
 *                  loopback address, free ports, KahaDB in BASE/data;
 *                  BASE/lib: XStream and Jettison, which the STOMP
 *                  jms-map-json transformation needs and Debian leaves off
 *                  the broker's class path
 *     .stop()      SIGTERM to its PID (SIGKILL after 20 s), waits for the exit
 *     .start()     the same broker again, same ports and data (an outage)
 *
 *   compileJmsConsumer(dir) → consume(openwireUrl, queue, count, quietMs, clientId?):
 *                  a javax.jms consumer (CLIENT_ACKNOWLEDGE) that prints each
 *                  MapMessage's fields, read with MapMessage getters, as one
 *                  JSON line (`{"class": …, "map": true, "fields": {…}, "types": {…}}`:
 *                  getString of each, and the class of getObject's value)
 *                → produce(openwireUrl, queue, fields): a javax.jms producer that sends
 *                  one persistent MapMessage with those fields (setString each)
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { toolPath, TOOLS } from './system-tools.ts';
import { canConnect, freePort } from './ports.ts';

const ACTIVEMQ_HOME = '/usr/share/activemq';
const JAVA_LIB = '/usr/share/java';

export interface Broker {
  readonly host: string;
  readonly stompPort: number;
  readonly openwirePort: number;
  readonly stompUrl: string;
  readonly openwireUrl: string;
  readonly base: string;
  /** The broker's own log (stdout and stderr). */
  log(): string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startBroker(base: string, o: { host?: string; stompPort?: number; withoutXStream?: boolean } = {}): Promise<Broker> {
  const host = o.host ?? '127.0.41.9';
  const java = toolPath(TOOLS.java);
  if (!existsSync(join(ACTIVEMQ_HOME, 'bin', 'activemq.jar'))) throw new Error('needs /usr/share/activemq (apt-get install activemq)');
  const stompPort = o.stompPort ?? await freePort(host);
  const openwirePort = await freePort(host);
  mkdirSync(join(base, 'conf'), { recursive: true });
  mkdirSync(join(base, 'data'), { recursive: true });
  mkdirSync(join(base, 'lib'), { recursive: true });
  for (const jar of o.withoutXStream ? [] : ['xstream.jar', 'jettison.jar', 'xpp3-min.jar']) {
    const to = join(base, 'lib', jar);
    if (!existsSync(to)) symlinkSync(join(JAVA_LIB, jar), to);
  }
  writeFileSync(join(base, 'conf', 'activemq.xml'), `<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans-2.0.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
  <broker xmlns="http://activemq.apache.org/schema/core" useJmx="false" brokerName="trawl-test" dataDirectory="${base}/data" useShutdownHook="false">
    <persistenceAdapter><kahaDB directory="${base}/data/kahadb"/></persistenceAdapter>
    <transportConnectors>
      <transportConnector name="openwire" uri="tcp://${host}:${openwirePort}"/>
      <transportConnector name="stomp" uri="stomp://${host}:${stompPort}"/>
    </transportConnectors>
  </broker>
</beans>
`);
  const logPath = join(base, 'broker.log');
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const { openSync } = await import('node:fs');
    const fd = openSync(logPath, 'a');
    child = spawn(java, [
      '-Xmx256m', `-Dactivemq.home=${ACTIVEMQ_HOME}`, `-Dactivemq.base=${base}`, `-Dactivemq.conf=${base}/conf`, `-Dactivemq.data=${base}/data`,
      '-jar', join(ACTIVEMQ_HOME, 'bin', 'activemq.jar'), 'start', `xbean:file:${base}/conf/activemq.xml`,
    ], { stdio: ['ignore', fd, fd], detached: true });
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`the broker exited with ${child.exitCode}:\n${readFileSync(logPath, 'utf8').slice(-3000)}`);
      if (await canConnect(host, stompPort) && await canConnect(host, openwirePort)) return;
      await sleep(200);
    }
    throw new Error(`the broker did not listen within 60 s:\n${readFileSync(logPath, 'utf8').slice(-3000)}`);
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  };
  await start();
  return {
    host,
    stompPort,
    openwirePort,
    stompUrl: `stomp://${host}:${stompPort}`,
    openwireUrl: `tcp://${host}:${openwirePort}`,
    base,
    log: () => readFileSync(logPath, 'utf8'),
    stop,
    start,
  };
}

const CONSUMER_JAVA = `
import javax.jms.*;
import org.apache.activemq.ActiveMQConnectionFactory;
import java.util.*;

/** Receives MapMessages from a queue and prints each one's fields, read with MapMessage getters, as a JSON line. */
public class JmsConsumer {
  static String q(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder("\\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\\\') b.append('\\\\').append(c);
      else if (c < 0x20) b.append(String.format("\\\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }
  public static void main(String[] a) {
    try {
      run(a);
    } catch (Exception e) {
      // The client's threads would keep the JVM alive: exit, saying why.
      System.err.println(e);
      System.exit(1);
    }
    System.exit(0);
  }
  static void run(String[] a) throws Exception {
    String url = a[0], queue = a[1];
    int count = Integer.parseInt(a[2]);
    long quietMs = Long.parseLong(a[3]);
    Connection c = new ActiveMQConnectionFactory(url).createConnection();
    if (a.length > 4) c.setClientID(a[4]);
    c.start();
    Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
    MessageConsumer mc = s.createConsumer(s.createQueue(queue));
    int n = 0;
    while (count < 0 || n < count) {
      Message m = mc.receive(quietMs);
      if (m == null) break;
      n++;
      StringBuilder line = new StringBuilder("{\\"class\\":" + q(m.getClass().getName()) + ",\\"map\\":" + (m instanceof MapMessage) + ",\\"fields\\":{");
      StringBuilder types = new StringBuilder(",\\"types\\":{");
      if (m instanceof MapMessage) {
        MapMessage mm = (MapMessage) m;
        List<String> names = new ArrayList<>();
        for (Enumeration<?> e = mm.getMapNames(); e.hasMoreElements();) names.add((String) e.nextElement());
        Collections.sort(names);
        boolean first = true;
        for (String k : names) {
          if (!first) { line.append(','); types.append(','); }
          first = false;
          line.append(q(k)).append(':').append(q(mm.getString(k)));
          Object o = mm.getObject(k);
          types.append(q(k)).append(':').append(q(o == null ? "null" : o.getClass().getSimpleName()));
        }
      }
      line.append("}").append(types).append("}}");
      System.out.println(line);
      m.acknowledge();
    }
    c.close();
  }
}
`;

const PRODUCER_JAVA = `
import javax.jms.*;
import org.apache.activemq.ActiveMQConnectionFactory;

/** Sends one persistent MapMessage: args url, queue, then name and value pairs (setString each). */
public class JmsProducer {
  public static void main(String[] a) {
    try {
      Connection c = new ActiveMQConnectionFactory(a[0]).createConnection();
      c.start();
      Session s = c.createSession(false, Session.CLIENT_ACKNOWLEDGE);
      MessageProducer p = s.createProducer(s.createQueue(a[1]));
      p.setDeliveryMode(DeliveryMode.PERSISTENT);
      MapMessage m = s.createMapMessage();
      for (int i = 2; i + 1 < a.length; i += 2) m.setString(a[i], a[i + 1]);
      p.send(m);
      c.close();
    } catch (Exception e) {
      System.err.println(e);
      System.exit(1);
    }
    System.exit(0);
  }
}
`;

const CLIENT_JARS = ['activemq-client.jar', 'geronimo-jms_1.1_spec.jar', 'geronimo-j2ee-management-1.1-spec.jar', 'hawtbuf.jar', 'slf4j-api.jar', 'slf4j-nop.jar'];

export interface JmsMessage {
  class: string;
  map: boolean;
  /** Each field read with MapMessage.getString. */
  fields: Record<string, string>;
  /** The class of each field's value (MapMessage.getObject): String, Integer, … */
  types: Record<string, string>;
}

export interface JmsConsumer {
  /** Receives up to `count` messages (all, with -1), giving up after `quietMs` without one; the MapMessages' fields. */
  consume(openwireUrl: string, queue: string, count: number, quietMs: number, clientId?: string): Promise<JmsMessage[]>;
  /** Sends one MapMessage with these string fields. */
  produce(openwireUrl: string, queue: string, fields: Readonly<Record<string, string>>): Promise<void>;
}

export function compileJmsConsumer(dir: string): JmsConsumer {
  const javac = toolPath(TOOLS.javac);
  const java = toolPath(TOOLS.java);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'JmsConsumer.java'), CONSUMER_JAVA);
  writeFileSync(join(dir, 'JmsProducer.java'), PRODUCER_JAVA);
  const cp = CLIENT_JARS.map((j) => join(JAVA_LIB, j)).join(':');
  const r = spawnSync(javac, ['-cp', cp, '-d', dir, join(dir, 'JmsConsumer.java'), join(dir, 'JmsProducer.java')], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`javac failed: ${r.stderr}`);
  return {
    consume: (url, queue, count, quietMs, clientId) => new Promise((resolve, reject) => {
      const child = spawn(java, ['-cp', `${dir}:${cp}`, 'JmsConsumer', url, queue, String(count), String(quietMs), ...(clientId !== undefined ? [clientId] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), quietMs + 120_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        if (code !== 0) reject(new Error(`the JMS consumer exited with ${code}: ${err}`));
        else resolve(out.trim() === '' ? [] : out.trim().split('\n').map((l) => JSON.parse(l) as JmsMessage));
      });
    }),
    produce: (url, queue, fields) => new Promise((resolve, reject) => {
      const child = spawn(java, ['-cp', `${dir}:${cp}`, 'JmsProducer', url, queue, ...Object.entries(fields).flat()], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        if (code !== 0) reject(new Error(`the JMS producer exited with ${code}: ${err}`));
        else resolve();
      });
    }),
  };
}

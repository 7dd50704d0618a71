/**
 * The public system information (`GET /api/sysinfo`).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from './config.ts';
import { typeTag } from './model/type-tags.ts';

/** Identifies this execution environment: one Lambda container, or one local process. */
const SERVER_ID = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;

export function sysInfo(cfg: Config, now: Date): Record<string, unknown> {
  const ns = cfg.modelNamespace;
  return {
    $type: typeTag(ns, 'SysInfo'),
    Version: cfg.version,
    ServerId: SERVER_ID,
    ServerTime: now.toISOString(),
    EventPublisherUrl: cfg.eventPublisherUrl,
    // Where field clients of the original service connect with MQTT over WebSocket.
    MqttPublisherUrl: cfg.mqttPublisherUrl,
    FitScriptEngineUrl: cfg.fitScriptEngineUrl,
    LicenseServerUrl: cfg.licenseServerUrl,
    UapBrokerUrl: cfg.uapBrokerUrl,
    PrinterConnectApiUrl: cfg.printerConnectApiUrl,
    AacClientUrl: cfg.aacClientUrl,
    GalleryIsEnabled: cfg.galleryEnabled,
    ReleaseNotes: [{ $type: typeTag(ns, 'ReleaseNote'), Name: `Gatehouse ${cfg.version}`, Url: cfg.releaseNotesUrl }],
  };
}

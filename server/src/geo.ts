import { readFileSync } from 'node:fs';
import type { GeoLocator } from '@atrium/routers';
import { type CityResponse, Reader } from 'maxmind';

/**
 * Where an IP address is, from an operator-supplied MaxMind DB city database (GeoLite2-City or
 * GeoIP2-City, `GEOIP_DATABASE`): read once at start-up into memory, looked up locally (no
 * request leaves the server). An address the database has no city and country for is null.
 */
export function openGeoLocator(path: string): GeoLocator {
  let reader: Reader<CityResponse>;
  try {
    reader = new Reader<CityResponse>(readFileSync(path));
  } catch (error) {
    throw new Error(`GEOIP_DATABASE ${path} is not a readable MaxMind DB file: ${(error as Error).message}`);
  }
  if (!/city/i.test(reader.metadata.databaseType)) {
    throw new Error(`GEOIP_DATABASE ${path} is a ${reader.metadata.databaseType} database; a City database is needed.`);
  }
  return {
    locate(ip) {
      let found: CityResponse | null;
      try {
        found = reader.get(ip);
      } catch {
        return null; // not an IP address (the stored value is the socket's, so only ever by mistake)
      }
      const cityName = found?.city?.names.en;
      const countryISOCode = found?.country?.iso_code;
      return cityName && countryISOCode ? { cityName, countryISOCode } : null;
    },
  };
}

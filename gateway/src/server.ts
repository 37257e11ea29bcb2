import { runPart } from '@cs/service';
import { gatewayPart } from './gateway';

/** The gateway in a process of its own, in front of services reached over the network. */
void runPart(gatewayPart);

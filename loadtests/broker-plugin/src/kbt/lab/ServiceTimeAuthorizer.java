package kbt.lab;

import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;

/**
 * Kafka's own KRaft authorizer, plus a fixed service time per produce request for the lab's
 * pressure profile.
 *
 * <p>A request handler thread authorizes every produce request once, before it appends. Holding
 * the handler there for {@code kbt.produce.service.time.us} microseconds, parked rather than
 * spinning, gives each produce request a cost that is not host CPU: the handlers' capacity in
 * requests per second is set by the request count alone, whatever the bytes and whatever else the
 * machine runs. On a 145-broker cluster that cost is real handler work spread over many cores; on
 * a 2-core lab it has to be stated, or the clients' own CPU saturates the machine first. Everything
 * after the handler (the request queue filling, network threads blocking on it, Kafka's idle meter
 * counting that as busy) is Kafka's own code.
 */
public final class ServiceTimeAuthorizer extends StandardAuthorizer {
    public static final String SERVICE_TIME_CONFIG = "kbt.produce.service.time.us";

    private long serviceNanos;

    @Override
    public void configure(Map<String, ?> configs) {
        super.configure(configs);
        Object value = configs.get(SERVICE_TIME_CONFIG);
        long micros = value == null ? 0 : Long.parseLong(value.toString().trim());
        if (micros < 0 || micros > 1_000_000) {
            throw new IllegalArgumentException(SERVICE_TIME_CONFIG + " must be 0..1000000, not " + micros);
        }
        serviceNanos = micros * 1_000L;
    }

    @Override
    public List<AuthorizationResult> authorize(AuthorizableRequestContext context, List<Action> actions) {
        if (serviceNanos > 0 && context.requestType() == ApiKeys.PRODUCE.id && writesTopics(actions)) {
            long end = System.nanoTime() + serviceNanos;
            for (long left = serviceNanos; left > 0; left = end - System.nanoTime()) {
                LockSupport.parkNanos(left);
            }
        }
        return super.authorize(context, actions);
    }

    // The produce path's topic WRITE check: once per request (an idempotent or transactional
    // producer's extra cluster check is not a second service time).
    private static boolean writesTopics(List<Action> actions) {
        for (Action action : actions) {
            if (action.operation() == AclOperation.WRITE
                    && action.resourcePattern().resourceType() == ResourceType.TOPIC) {
                return true;
            }
        }
        return false;
    }
}
